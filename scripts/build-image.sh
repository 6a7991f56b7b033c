#!/usr/bin/env bash
# Builds the ModelKeeper container image, modelkeeper:<version> and modelkeeper:latest, from
# deploy/container/Containerfile, with podman (or docker when only a docker daemon is there).
#
#   scripts/build-image.sh [--build-jar] [--rebuild-base]
#
# 1. The runnable jar, modelkeeper-cli/target/modelkeeper.jar, is built with the Maven wrapper
#    when it is missing (--build-jar: always).
# 2. The base image (a Debian 12 minbase with openjdk-17-jre-headless, ca-certificates and curl,
#    without man pages, docs and locales) is made with mmdebstrap from Debian packages, no
#    registry needed, when it is missing; otherwise it is reused (--rebuild-base: made again,
#    e.g. for Debian's security updates). Mirrors: DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR.
# 3. The image is built on it and tagged.
#
# Logs go to target/image/. Every step is bounded by a timeout. Exits non-zero on any failure,
# and with 2 (and how to install one) when there is no container engine.
set -euo pipefail
SCRIPT=build-image
cd "$(dirname "$0")/.."
source scripts/image-common.sh

BUILD_JAR=false
REBUILD_BASE=false
for arg in "$@"; do
  case $arg in
    --build-jar) BUILD_JAR=true ;;
    --rebuild-base) REBUILD_BASE=true ;;
    -h | --help)
      sed -n '2,17s/^# \{0,1\}//p' "$0"
      exit 0
      ;;
    *) die "unknown argument '$arg' (known: --build-jar, --rebuild-base)" ;;
  esac
done

DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
JAR=modelkeeper-cli/target/modelkeeper.jar
LOGS=target/image
TOTAL_START=$SECONDS

find_engine
say "container engine: $ENGINE"
mkdir -p "$LOGS"

if $BUILD_JAR || [[ ! -f $JAR ]]; then
  run_logged "building $JAR" 1800 "$LOGS/jar.log" \
    ./mvnw -B package -DskipTests -pl modelkeeper-cli -am
fi
[[ -f $JAR ]] || die "$JAR is missing after the build"
VERSION=$(timeout 60 java -jar "$JAR" --version | awk '{print $2}')
[[ -n $VERSION ]] || die "could not read the version from '$JAR --version'"
REVISION=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)

make_base() {
  command -v mmdebstrap >/dev/null 2>&1 ||
    die "mmdebstrap is needed to make the base image $BASE_IMAGE from Debian packages (Debian, Ubuntu: apt-get install -y mmdebstrap)"
  local tar=$LOGS/base.tar
  rm -f "$tar"
  # merged-usr hook: /usr merged as in bookworm without the usrmerge package (and the perl it
  # pulls in). The man1 folder must exist for the JRE's update-alternatives though man pages
  # are left out.
  # shellcheck disable=SC2016 # $1 is the hook's argument, expanded by mmdebstrap
  run_logged "making the base image with mmdebstrap (bookworm, openjdk-17-jre-headless)" 900 \
    "$LOGS/base.log" \
    mmdebstrap --variant=minbase \
    --include=openjdk-17-jre-headless,ca-certificates,curl \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --setup-hook='mkdir -p "$1/usr/share/man/man1"' \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    bookworm "$tar" \
    "deb $DEBIAN_MIRROR bookworm main" \
    "deb $DEBIAN_MIRROR bookworm-updates main" \
    "deb $DEBIAN_SECURITY_MIRROR bookworm-security main"
  run_logged "importing $tar as $BASE_IMAGE" 600 "$LOGS/import.log" \
    "$ENGINE" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change "LABEL dev.modelkeeper.base.made=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    "$tar" "$BASE_IMAGE"
  rm -f "$tar"
}

if $REBUILD_BASE || ! image_exists "$BASE_IMAGE"; then
  make_base
else
  say "reusing the base image $BASE_IMAGE (--rebuild-base makes it again)"
fi

build_args=(--build-arg "BASE_IMAGE=$BASE_IMAGE" --build-arg "VERSION=$VERSION"
  --build-arg "REVISION=$REVISION" -t "$IMAGE_NAME:$VERSION" -t "$IMAGE_NAME:latest"
  -f deploy/container/Containerfile)
if [[ $ENGINE == podman ]]; then
  # docker format keeps the HEALTHCHECK; chroot isolation runs RUN steps where the OCI runtime
  # cannot (nested containers), and works elsewhere too.
  build_args+=(--format docker --isolation "${MODELKEEPER_BUILD_ISOLATION:-chroot}")
fi
run_logged "building $IMAGE_NAME:$VERSION" 600 "$LOGS/build.log" \
  "$ENGINE" build "${build_args[@]}" "$(dirname "$JAR")"

SIZE=$("$ENGINE" image inspect --format '{{.Size}}' "$IMAGE_NAME:$VERSION")
say "built $IMAGE_NAME:$VERSION and $IMAGE_NAME:latest ($((SIZE / 1000000)) MB) in $((SECONDS - TOTAL_START))s"
say "run it:  $ENGINE run --rm -p 127.0.0.1:8000:8000 -p 127.0.0.1:8001:8001 --memory 1g $IMAGE_NAME:latest"
