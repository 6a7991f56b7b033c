package dev.modelkeeper.onnx.remote;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Locale;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;

/**
 * Where an S3 repository lives, as {@code --repository} names it. Immutable and thread-safe.
 *
 * <ul>
 *   <li>{@code s3://bucket/prefix}: Amazon S3, or the store {@code AWS_ENDPOINT_URL} (or {@code
 *       AWS_ENDPOINT_URL_S3}) names, addressed by path;
 *   <li>{@code s3://host:port/bucket/prefix} (Triton's form for S3-compatible stores) and {@code
 *       s3://https://host:port/bucket/prefix}: that endpoint, over HTTP or HTTPS, addressed by
 *       path.
 * </ul>
 *
 * <p>Credentials come from the SDK's default chain (environment, profile, web identity as on EKS,
 * container and instance metadata); the region from {@code AWS_REGION} or the profile, else {@code
 * us-east-1} for a store that is not Amazon S3.
 *
 * @param endpoint the store's endpoint, or null for the SDK's default
 * @param bucket the bucket
 * @param prefix the key prefix of the repository's root, without slashes at its ends; may be empty
 */
public record S3Location(URI endpoint, String bucket, String prefix) {

  /**
   * Reads an {@code s3://} location.
   *
   * @throws IllegalArgumentException naming the location when it has no bucket or a bad port
   */
  public static S3Location parse(String location) {
    String rest = location.substring("s3://".length());
    URI endpoint = null;
    String scheme = "http";
    if (rest.toLowerCase(Locale.ROOT).startsWith("https://")) {
      scheme = "https";
      rest = rest.substring("https://".length());
    } else if (rest.toLowerCase(Locale.ROOT).startsWith("http://")) {
      rest = rest.substring("http://".length());
    }
    String[] parts = rest.split("/", 2);
    if (parts[0].contains(":")) { // host:port, then the bucket
      try {
        endpoint = new URI(scheme + "://" + parts[0]);
        if (endpoint.getHost() == null || endpoint.getPort() < 0) {
          throw new IllegalArgumentException();
        }
      } catch (URISyntaxException | IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "repository " + location + ": '" + parts[0] + "' is not host:port");
      }
      rest = parts.length > 1 ? parts[1] : "";
      parts = rest.split("/", 2);
    }
    String bucket = parts[0];
    if (bucket.isEmpty()) {
      throw new IllegalArgumentException(
          "repository " + location + " names no bucket: use s3://bucket/prefix");
    }
    String prefix = parts.length > 1 ? parts[1].replaceAll("^/+|/+$", "") : "";
    return new S3Location(endpoint, bucket, prefix);
  }

  /** The prefix every key of the repository starts with: empty, or the prefix and a slash. */
  public String listPrefix() {
    return prefix.isEmpty() ? "" : prefix + "/";
  }

  /** The endpoint and bucket, for cache names: one object is cached once whatever the prefix. */
  String endpointAndBucket() {
    return (endpoint == null ? "s3" : endpoint.toString()) + "/" + bucket;
  }

  /**
   * A client for this location: the JDK's URL connection for HTTP, path-style addressing for a
   * store that is not Amazon S3, checksums only where the protocol requires them.
   *
   * @throws IllegalArgumentException when no region is configured for Amazon S3
   */
  public S3Client client(Duration timeout) {
    boolean otherStore =
        endpoint != null
            || System.getenv("AWS_ENDPOINT_URL") != null
            || System.getenv("AWS_ENDPOINT_URL_S3") != null;
    S3ClientBuilder b =
        S3Client.builder()
            .httpClientBuilder(
                UrlConnectionHttpClient.builder()
                    .connectionTimeout(Duration.ofSeconds(10))
                    .socketTimeout(timeout))
            .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
            .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
            .forcePathStyle(otherStore);
    if (endpoint != null) {
      b.endpointOverride(endpoint);
    }
    try {
      b.region(new DefaultAwsRegionProviderChain().getRegion());
    } catch (SdkClientException e) {
      if (!otherStore) {
        throw new IllegalArgumentException(
            "repository " + this + ": set AWS_REGION (or a profile's region) for Amazon S3");
      }
      b.region(Region.US_EAST_1);
    }
    return b.build();
  }

  @Override
  public String toString() {
    String host =
        endpoint == null
            ? ""
            : (endpoint.getScheme().equals("https") ? "https://" : "")
                + endpoint.getHost()
                + ":"
                + endpoint.getPort()
                + "/";
    return "s3://" + host + bucket + (prefix.isEmpty() ? "" : "/" + prefix);
  }
}
