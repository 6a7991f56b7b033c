package dev.modelkeeper.onnx.remote;

import dev.modelkeeper.onnx.ModelArtifact;
import dev.modelkeeper.onnx.ModelId;
import dev.modelkeeper.onnx.ModelRepository;
import dev.modelkeeper.onnx.RepositoryEntry;
import java.net.URI;
import java.util.List;

/**
 * A model repository served over HTTP(S) with a {@link Manifest}; model files are downloaded into
 * an {@link ArtifactCache}. Thread-safe.
 */
public final class HttpModelRepository implements ModelRepository {

  private final URI base;
  private final ArtifactCache cache;

  public HttpModelRepository(URI base, ArtifactCache cache) {
    this.base = base;
    this.cache = cache;
  }

  @Override
  public List<RepositoryEntry> list() {
    throw new UnsupportedOperationException("not yet implemented");
  }

  @Override
  public RepositoryEntry locate(ModelId id) {
    throw new UnsupportedOperationException("not yet implemented");
  }

  @Override
  public ModelArtifact fetch(ModelId id) {
    throw new UnsupportedOperationException("not yet implemented");
  }

  @Override
  public String location() {
    return base.toString();
  }
}
