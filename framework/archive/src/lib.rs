//! Generations and the archive: manifests, content hashes, promote, rollback, diff, verify.
