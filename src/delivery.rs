//! The outcomes both delivery channels share.
//!
//! Why an inventory did not reach the cluster ([`Reason`], persisted by the store and
//! mapped to `--strict` exit codes), where it was going ([`Target`]) and which state
//! changes an outcome means for the queued snapshots ([`Mark`], decided by pure functions
//! so every flow agrees). Nearly a leaf: it names only the snapshot id, so the on-disk
//! journal format does not depend on the kube client.

use crate::snapshot_id::SnapshotId;

/// Why an inventory could not be applied. Each has its own `--strict` exit code.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// No kubeconfig file where it was looked for.
    NoKubeconfig,
    /// The kubeconfig cannot be read or names no usable cluster/context.
    BadKubeconfig,
    /// Connection refused, DNS, TLS, timeouts: the server did not answer in time.
    Unreachable,
    /// 401: the credentials were not accepted.
    Unauthorized,
    /// 403: authenticated but missing RBAC.
    Forbidden,
    /// 409: another field manager owns a field with a different value.
    Conflict,
    /// 5xx, or a response that is not the API's.
    ServerError,
    /// 4xx other than the above: the server refused the object.
    Rejected,
    /// The inventory could not be rendered.
    RenderFailed,
    /// The server's certificate does not verify against the kubeconfig's CA (or is not
    /// valid for the server's name): a server answered, but not the one trusted.
    TlsIdentity,
    /// The live inventory is managed by a GitOps controller (Flux's kustomize-controller,
    /// Argo CD): the cluster channel cannot deliver it; `clinv commit` is the channel.
    GitopsManaged,
    /// The target looks newer by `renderedAt`, but the store recorded this snapshot
    /// later: a clock (or a fixed `SOURCE_DATE_EPOCH`) disagrees. Kept, never silently
    /// superseded; `--allow-older` delivers it.
    ClockSkew,
    /// The live ClusterInventory carries another domain's `lok8s.dev/domain` label (or
    /// none): the kubeconfig points at another domain's cluster. Never overwritten.
    DomainMismatch,
}

impl Reason {
    /// The name in the journal and in messages (the serde name; a test holds them equal).
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::NoKubeconfig => "no-kubeconfig",
            Reason::BadKubeconfig => "bad-kubeconfig",
            Reason::Unreachable => "unreachable",
            Reason::Unauthorized => "unauthorized",
            Reason::Forbidden => "forbidden",
            Reason::Conflict => "conflict",
            Reason::ServerError => "server-error",
            Reason::Rejected => "rejected",
            Reason::RenderFailed => "render-failed",
            Reason::TlsIdentity => "tls-identity",
            Reason::GitopsManaged => "gitops-managed",
            Reason::ClockSkew => "clock-skew",
            Reason::DomainMismatch => "domain-mismatch",
        }
    }

    /// Every variant, in declaration order.
    pub const ALL: [Reason; 13] = [
        Reason::NoKubeconfig,
        Reason::BadKubeconfig,
        Reason::Unreachable,
        Reason::Unauthorized,
        Reason::Forbidden,
        Reason::Conflict,
        Reason::ServerError,
        Reason::Rejected,
        Reason::RenderFailed,
        Reason::TlsIdentity,
        Reason::GitopsManaged,
        Reason::ClockSkew,
        Reason::DomainMismatch,
    ];
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a client points: recorded with snapshots; never credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub server: String,
    pub context: Option<String>,
    /// The kubeconfig files that named it (paths only, never their content), so a replay
    /// goes where the publish was aimed.
    pub kubeconfig: Vec<String>,
}

/// Longest failure detail kept with a pending snapshot (the journal is not a log).
pub const MAX_DETAIL: usize = 500;

/// A state change a delivery decides for one snapshot, by id; the store records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    /// Delivered to the cluster.
    Applied { id: SnapshotId },
    /// Still queued, and why.
    Pending {
        id: SnapshotId,
        reason: Reason,
        detail: String,
    },
    /// Never to be delivered: a newer snapshot (`by`) was, or the live object is newer
    /// (`why`).
    Superseded {
        id: SnapshotId,
        by: Option<SnapshotId>,
        why: Option<String>,
    },
    /// Never to be delivered through the cluster channel, and why (a GitOps controller
    /// owns the live object): recorded as superseded with the reason.
    Refused {
        id: SnapshotId,
        reason: Reason,
        detail: String,
    },
}

/// Whether a snapshot not delivered for `reason` stays queued for `clinv replay`.
///
/// Whether a snapshot that could not be delivered for `reason` stays queued for
/// `clinv replay`: not when no replay can ever deliver it (a GitOps controller owns the
/// live object: `clinv commit` is the channel).
pub fn stays_pending(reason: Reason) -> bool {
    reason != Reason::GitopsManaged
}

/// What a delivery of a snapshot did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivered<'a> {
    Applied,
    /// The stale guard: the live object was rendered later and was left alone.
    Stale {
        live_rendered_at: &'a str,
    },
}

/// Why a stale snapshot was superseded without an apply.
pub fn stale_detail(live_rendered_at: &str) -> String {
    format!("the live inventory was rendered later ({live_rendered_at})")
}

/// The marks after snapshot `id` was delivered.
///
/// Applied (or superseded, when the live object was newer), and each older pending snapshot
/// superseded by it, because the inventory is a singleton and the newest state already went
/// out.
pub fn after_delivery(
    id: &SnapshotId,
    delivered: Delivered<'_>,
    older_pending: &[&SnapshotId],
) -> Vec<Mark> {
    let first = match delivered {
        Delivered::Applied => Mark::Applied { id: id.clone() },
        Delivered::Stale { live_rendered_at } => Mark::Superseded {
            id: id.clone(),
            by: None,
            why: Some(stale_detail(live_rendered_at)),
        },
    };
    let older = older_pending
        .iter()
        .filter(|o| **o != id)
        .map(|o| Mark::Superseded {
            id: (*o).clone(),
            by: Some(id.clone()),
            why: None,
        });
    std::iter::once(first).chain(older).collect()
}

/// The mark after snapshot `id` could not be delivered: it stays pending, with the
/// reason and the (shortened) detail, for the next replay.
pub fn after_failure(id: &SnapshotId, reason: Reason, detail: &str) -> Mark {
    let detail = detail.chars().take(MAX_DETAIL).collect();
    let id = id.clone();
    if stays_pending(reason) {
        Mark::Pending { id, reason, detail }
    } else {
        Mark::Refused { id, reason, detail }
    }
}

/// Whether a snapshot recorded at `recorded` was recorded after the one the target holds.
///
/// The target holds an inventory rendered at `target_rendered_at`. Judged by the store's
/// order when the store has a snapshot with that render time (`known`: for each, whether
/// it was recorded before), else by comparing the times.
pub fn skewed(recorded: &str, target_rendered_at: &str, known: &[bool]) -> bool {
    if !known.is_empty() {
        return known.iter().any(|before| *before);
    }
    let parse = crate::util::time::parse_rfc3339;
    matches!(
        (parse(recorded), parse(target_rendered_at)),
        (Some(recorded), Some(target)) if recorded > target
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(id: &str) -> SnapshotId {
        SnapshotId::from(id)
    }

    fn superseded_by(id: &str, by: &str) -> Mark {
        Mark::Superseded {
            id: id.into(),
            by: Some(by.into()),
            why: None,
        }
    }

    #[test]
    fn display_names_are_the_serde_names() {
        for r in Reason::ALL {
            assert_eq!(serde_json::to_value(r).unwrap(), r.as_str());
            assert_eq!(r.to_string(), r.as_str());
        }
    }

    #[test]
    fn an_applied_snapshot_supersedes_the_older_pending_ones() {
        assert_eq!(
            after_delivery(&id("c"), Delivered::Applied, &[&id("a"), &id("b")]),
            [
                Mark::Applied { id: "c".into() },
                superseded_by("a", "c"),
                superseded_by("b", "c"),
            ]
        );
        assert_eq!(
            after_delivery(&id("c"), Delivered::Applied, &[]),
            [Mark::Applied { id: "c".into() }]
        );
    }

    #[test]
    fn a_stale_snapshot_is_superseded_with_the_reason_and_still_supersedes_older_ones() {
        let at = "2026-07-06T12:00:00Z";
        assert_eq!(
            after_delivery(
                &id("b"),
                Delivered::Stale {
                    live_rendered_at: at
                },
                &[&id("a"), &id("b")]
            ),
            [
                Mark::Superseded {
                    id: "b".into(),
                    by: None,
                    why: Some(format!("the live inventory was rendered later ({at})")),
                },
                superseded_by("a", "b"),
            ]
        );
    }

    #[test]
    fn a_gitops_managed_object_is_not_queued() {
        assert_eq!(
            after_failure(&id("a"), Reason::GitopsManaged, "Flux Kustomization x/y"),
            Mark::Refused {
                id: "a".into(),
                reason: Reason::GitopsManaged,
                detail: "Flux Kustomization x/y".into()
            }
        );
        assert!(stays_pending(Reason::ClockSkew) && stays_pending(Reason::Unreachable));
    }

    #[test]
    fn a_failed_delivery_stays_pending_with_a_short_detail() {
        let long = "é".repeat(MAX_DETAIL + 10);
        let Mark::Pending { id, reason, detail } =
            after_failure(&id("a"), Reason::Forbidden, &long)
        else {
            panic!("not pending");
        };
        assert_eq!((id.as_str(), reason), ("a", Reason::Forbidden));
        assert_eq!(detail.chars().count(), MAX_DETAIL);
    }

    #[test]
    fn skew_is_judged_by_the_store_order_when_it_knows_the_target() {
        let at = "2026-12-03T06:00:00.000Z";
        // The store recorded the target's snapshot before this one: skew.
        assert!(skewed(at, "2027-01-01T00:00:00Z", &[true]));
        // ... after this one: the target is genuinely newer.
        assert!(!skewed(at, "2023-01-01T00:00:00Z", &[false]));
        // Unknown to the store: recorded after the target was rendered.
        assert!(skewed(at, "2026-01-01T00:00:00Z", &[]));
        assert!(!skewed(at, "2027-01-01T00:00:00Z", &[]));
        assert!(!skewed(at, "not a time", &[]));
    }
}
