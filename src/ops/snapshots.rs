//! `clinv snapshots`: what its subcommands decide.
//!
//! The `--since` bound, the domains gc goes through, and the failures of verify, export and import: a store with problems,
//! an archive with a gap, a refused domain are errors naming them (exit 1).

use crate::domain::Domain;
use crate::error::{ArgumentError, Damaged, Error, Result};
use crate::store::Store;
use crate::store::export::{Exported, Imported};
use crate::store::gc::Verified;
use crate::store::scan::Listing;
use std::path::Path;

/// What a subcommand works on: the store, and the domains selected (`None`: every one).
#[derive(Clone, Copy)]
pub struct On<'a> {
    pub store: &'a Store,
    pub domains: Option<&'a [Domain]>,
}

/// `--since`: seconds since the epoch (a time, a date or an age before `now`).
///
/// # Errors
/// [`ArgumentError::Time`]: not a time clinv reads.
pub fn since(text: Option<&str>, now: jiff::Timestamp) -> Result<Option<i64>> {
    let Some(t) = text else { return Ok(None) };
    let at = crate::history::audit::parse_query_bound(t, false, now)
        .ok_or_else(|| Error::from(ArgumentError::Time(t.to_string())))?;
    Ok(Some(at.as_second()))
}

/// How `snapshots gc` deletes: the newest `keep` kept, `dry_run` deletes nothing,
/// `allow_damage` goes on past damaged lines.
#[derive(Clone, Copy)]
pub struct Gc {
    pub keep: usize,
    pub dry_run: bool,
    pub allow_damage: bool,
}

/// `snapshots gc` of each selected domain in turn, `each` handed what it deleted (or
/// would) as soon as the domain is done; the number of snapshots in all.
///
/// # Errors
/// A domain's gc failed ([`crate::store::DomainStore::gc`]), or what `each` returns.
pub fn gc(
    on: On<'_>,
    how: Gc,
    mut each: impl FnMut(Domain, Listing) -> Result<()>,
) -> Result<usize> {
    let mut total = 0;
    for d in on.store.select(on.domains) {
        let doomed = on
            .store
            .domain(&d)
            .gc(how.keep, how.dry_run, how.allow_damage)?;
        total += doomed.len();
        each(d, doomed)?;
    }
    Ok(total)
}

/// A verified store with problems is a failure naming the store.
///
/// # Errors
/// [`Damaged::Store`] when [`Verified::problems`] is not 0.
pub fn verified(store: &Path, verified: &Verified) -> Result<()> {
    match verified.problems() {
        0 => Ok(()),
        problems => Err(Damaged::Store {
            problems,
            store: store.to_path_buf(),
        }
        .into()),
    }
}

/// An export that left something out is a failure: an archive with a gap is found on
/// this side of the air gap, not the far one.
///
/// # Errors
/// [`Damaged::ExportGap`] when the export left something out.
pub fn exported(exported: &Exported, file: &Path) -> Result<()> {
    let left = &exported.left_out;
    if left.is_empty() {
        return Ok(());
    }
    Err(Damaged::ExportGap {
        count: left.count(),
        file: file.to_path_buf(),
    }
    .into())
}

/// An import that refused a domain is a failure naming them (the others were
/// imported).
///
/// # Errors
/// [`Damaged::ImportRefused`] when a domain was refused.
pub fn imported(imported: &Imported, file: &Path) -> Result<()> {
    if imported.refused.is_empty() {
        return Ok(());
    }
    Err(Damaged::ImportRefused {
        domains: imported
            .refused
            .iter()
            .map(|(d, _)| d.to_string())
            .collect(),
        file: file.to_path_buf(),
    }
    .into())
}

/// `snapshots import oci://…`: the artifact at `url`, recorded as a snapshot of its
/// domain ([`crate::ops::pull::import`]).
///
/// # Errors
/// A malformed reference; as [`crate::ops::pull::import`].
#[cfg(feature = "gitops")]
pub fn import_oci(
    store: &Store,
    url: &str,
    access: &crate::oci::Access,
    key: Option<&crate::oci::PublicKey>,
) -> Result<crate::ops::pull::Imported> {
    let reference = crate::oci::parse(url)?;
    crate::ops::pull::import(store, &reference, access, key)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--since` reads an age before now and refuses what is no time.
    #[test]
    fn since_reads_a_bound_and_refuses_what_is_no_time() {
        let now = jiff::Timestamp::from_second(1_000_000).unwrap();
        assert_eq!(since(None, now).unwrap(), None);
        assert_eq!(
            since(Some("1970-01-02T00:00:00Z"), now).unwrap(),
            Some(86_400)
        );
        assert!(matches!(
            since(Some("soon"), now),
            Err(Error::Argument(ArgumentError::Time(t))) if t == "soon"
        ));
    }
}
