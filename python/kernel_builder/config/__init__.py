"""build.toml: the model, the edition readers, validation errors and update-build."""
