//! What a command that reads the store can know: the store, and the project when there
//! is one (for its deploy domains and `clusters/.active`).

use crate::error::{Error, Result};
use crate::project::Project;
use crate::store::Store;
use std::path::Path;

/// The store a store-only command (`snapshots`, `log`, `report`, `diff`, `commit
/// --snapshot`) reads, and the project when there is one.
pub struct Reach {
    pub project: Option<Project>,
    pub store: Store,
}

impl Reach {
    /// The store from `snapshots` (`--snapshots`, `CLINV_SNAPSHOTS`) alone, else
    /// `<root>/snapshots` of the project `root` names or `cwd` is in.
    ///
    /// # Errors
    /// A `--root` that names no project ([`Error::RootNotFound`] and its kind); no store:
    /// no project found and no store named ([`Error::NoStore`]).
    pub fn open(root: Option<&Path>, snapshots: Option<&Path>, cwd: &Path) -> Result<Reach> {
        let project = match Project::discover(root, cwd) {
            Ok(p) => Some(p),
            // `--root` that names nothing is still an error; no project found is not,
            // when the store is named.
            Err(Error::NoProject(_)) if snapshots.is_some() => None,
            Err(Error::NoProject(cwd)) => return Err(Error::NoStore(cwd)),
            Err(e) => return Err(e),
        };
        let store = match (snapshots, &project) {
            (Some(dir), _) => Store::at(dir),
            (None, Some(p)) => Store::of_project(None, p.root()),
            (None, None) => return Err(Error::NoStore(cwd.to_path_buf())),
        };
        Ok(Reach { project, store })
    }
}
