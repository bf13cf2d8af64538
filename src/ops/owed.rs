//! Owed pushes: the Git and registry channels' queue ([`crate::store::outbox`]).
//!
//! What `commit --push` and `push oci://…` record when the far end does not answer, and
//! the one-shot delivery that `replay` and the delivery loop call.
//!
//! A delivery pushes exactly what is owed: the owed commit to its branch, never forced
//! and never rebuilt on a moved tip (a remote that moved on is a refusal, and the push
//! stays owed); the artifact re-packed from the store with the annotations it was first
//! packed with (the same manifest digest), signed when it was asked. Credentials are
//! read when it is delivered, as the original command read them: the item names the
//! variables and the key's path, never a value.

use crate::delivery::Reason;
use crate::domain::Domain;
use crate::error::Error;
use crate::store::{DomainStore, Store};
use crate::util::notice::Notice;

pub use crate::store::outbox::{Damage, Entry, GitPush, Listing, OciPush, Owed, Push, Settled};

/// A push that was just recorded as owed, and what to say about it.
#[derive(Debug)]
pub struct Owing {
    pub reason: Reason,
    /// `… push owed: will be delivered by clinv replay or the delivery loop` (or, when
    /// the store could not record it, that it was not recorded).
    pub message: String,
    /// The store could not record the owed push: nothing will deliver it by itself.
    pub not_recorded: Option<Error>,
}

/// The failure's words for an outbox item: one line, redacted, at most 300 characters.
pub fn detail(e: &dyn std::error::Error) -> String {
    let text = crate::util::redact::detail(&crate::error::headline(e));
    text.chars().take(300).collect()
}

/// Records `item` as owed in `store` (replacing an older owed push to its target), and
/// says so.
pub fn owe(store: &DomainStore, item: &Owed, e: &dyn std::error::Error) -> Owing {
    let target = item.push.shown_target();
    let what = match &item.push {
        Push::Git(g) => format!("{} of {}", &g.commit[..g.commit.len().min(12)], item.domain),
        Push::Oci(_) => format!("snapshot {} of {}", item.snapshot, item.domain),
    };
    let failure = crate::util::redact::detail(&crate::error::chain(e));
    match store.owe(item) {
        Ok(_) => Owing {
            reason: item.reason,
            message: format!(
                "{} push owed: {what} to {target} ({}: {failure}); will be delivered by `clinv replay` or the delivery loop when it answers",
                item.push.channel(),
                item.reason
            ),
            not_recorded: None,
        },
        Err(not) => Owing {
            reason: item.reason,
            message: format!(
                "{} push of {what} to {target} failed ({}: {failure}), and the store could not record it as owed: {}",
                item.push.channel(),
                item.reason,
                crate::error::chain(&not)
            ),
            not_recorded: Some(not),
        },
    }
}

/// The owed pushes of `domains` (all without), with the outbox files that cannot be
/// used: one directory read, no journal read.
pub fn owed(store: &Store, domains: Option<&[Domain]>) -> Listing {
    let mut listing = crate::store::outbox::list(store.root(), None);
    if let Some(domains) = domains {
        let of = |d: &Domain| domains.contains(d);
        listing.owed.retain(|e| of(&e.owed.domain));
        listing.damaged.retain(|d| {
            // A damaged file is shown for the domain its name says, else everywhere.
            let name = d.path.file_name().map(|n| n.to_string_lossy().into_owned());
            let named = name.as_deref().and_then(domain_of_name);
            named.is_none_or(|n| of(&n))
        });
    }
    listing
}

/// The owed pushes of one domain.
pub fn owed_of(store: &Store, domain: &Domain) -> Listing {
    owed(store, Some(std::slice::from_ref(domain)))
}

fn domain_of_name(name: &str) -> Option<Domain> {
    let stem = name.strip_suffix(".json")?;
    Domain::new(stem.splitn(3, '-').nth(2)?)
}

/// The owed-push warnings of a listing's damaged files.
pub fn damage_notices(listing: &Listing) -> Vec<Notice> {
    listing
        .damaged
        .iter()
        .map(|d| Notice::warn(format!("outbox: {d}")))
        .collect()
}

/// One line per owed push of a domain, for `status`: `git: 1 push owed to origin (main)
/// since 2026-…`.
pub fn summary_lines(listing: &Listing, domain: &Domain) -> Vec<String> {
    listing
        .owed
        .iter()
        .filter(|e| e.owed.domain == *domain)
        .map(|e| {
            format!(
                "{}: 1 push owed to {} since {} ({}: {})",
                e.owed.push.channel(),
                e.owed.push.shown_target(),
                e.owed.at,
                e.owed.reason,
                e.owed.detail
            )
        })
        .collect()
}

#[cfg(feature = "gitops")]
pub use deliver::{Delivery, deliver};

#[cfg(feature = "gitops")]
mod deliver;
