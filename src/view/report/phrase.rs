//! A change in words, shared by the text, Markdown and HTML printers.
use crate::history::diff::{Change, Field, Op};
use crate::history::version::Order;

/// How many characters of a `specHash` human formats show (as `lo status` does).
const HASH_CHARS: usize = 12;

/// A change in words, shared by the text, Markdown and HTML printers. Values are already
/// on one line, with control characters escaped, but not escaped for any markup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Phrase {
    /// `+` added, `-` removed, `~` changed.
    pub sign: char,
    /// The addon (`cilium`, `cilium#2`) or the object field (`kubernetesVersion`).
    pub subject: String,
    /// The addon field, when it is not the chart version (`category`, `source`, `appVersion`).
    pub attribute: Option<&'static str>,
    pub from: Option<String>,
    pub to: Option<String>,
    /// For an added addon: its category and `target` when it is one.
    pub qualifier: Option<String>,
    /// `upgrade`, `downgrade`, `unordered` or `same version` for version fields.
    pub note: Option<&'static str>,
}

impl Phrase {
    pub fn of(c: &Change) -> Phrase {
        let shown = |v: &Option<String>| {
            v.as_deref().map(|v| {
                if c.field == Field::SpecHash && v.chars().count() > HASH_CHARS {
                    format!(
                        "{}…",
                        one_line(&v.chars().take(HASH_CHARS).collect::<String>())
                    )
                } else {
                    one_line(v)
                }
            })
        };
        let subject = one_line(&c.subject().unwrap_or_else(|| c.field.as_str().to_string()));
        let attribute = match c.field {
            Field::AppVersion | Field::Category | Field::Source => Some(c.field.as_str()),
            _ => None,
        };
        let qualifier = c
            .entry
            .as_ref()
            .filter(|_| c.change == Op::Added)
            .and_then(|e| {
                let mut parts: Vec<String> = e.category.iter().map(|s| one_line(s)).collect();
                if e.source.as_deref() == Some("target") {
                    parts.push("target".into());
                }
                (!parts.is_empty()).then(|| parts.join(", "))
            });
        Phrase {
            sign: match c.change {
                Op::Added => '+',
                Op::Removed => '-',
                _ => '~',
            },
            subject,
            attribute,
            from: shown(&c.from),
            to: shown(&c.to),
            qualifier,
            note: note(c),
        }
    }

    /// The plain one-line form: `~ cilium 1.19.2 → 1.20.1 (upgrade)`.
    pub fn line(&self) -> String {
        let mut out = format!("{} {}", self.sign, self.subject);
        out.push_str(&self.detail());
        out
    }

    /// Everything after the subject, with a leading space: ` 1.19.2 → 1.20.1 (upgrade)`.
    pub fn detail(&self) -> String {
        let mut out = String::new();
        match self.sign {
            '+' => {
                if let Some(v) = &self.to {
                    out.push_str(&format!(" {v}"));
                }
                if let Some(q) = &self.qualifier {
                    out.push_str(&format!(" ({q})"));
                }
            }
            '-' => {
                if let Some(v) = &self.from {
                    out.push_str(&format!(" {v}"));
                }
            }
            _ => {
                if let Some(a) = self.attribute {
                    out.push_str(&format!(" {a}"));
                }
                out.push_str(&format!(" {} → {}", or_none(&self.from), or_none(&self.to)));
                if let Some(n) = self.note {
                    out.push_str(&format!(" ({n})"));
                }
            }
        }
        out
    }
}

fn note(c: &Change) -> Option<&'static str> {
    match c.change {
        Op::Upgraded => Some("upgrade"),
        Op::Downgraded => Some("downgrade"),
        _ => match c.order() {
            Some(Order::Unordered) => Some("unordered"),
            Some(Order::Equal) => Some("same version"),
            _ => None,
        },
    }
}

pub(super) fn or_none(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("(none)")
}

/// Escapes every control character, newlines and tabs included, so a value stays on one
/// line and cannot drive a terminal.
pub(super) fn one_line(text: &str) -> String {
    crate::util::redact::escape_line(text)
}

/// What a step without changes says, in every format.
pub(super) const NO_CHANGES: &str = "no changes";

/// The first step of a history, in every format: `first recorded inventory: Kubernetes
/// v1.31.10, 9 addons` (a first install, not fields going from "(none)" to values).
pub(super) fn first_step(kubernetes_version: Option<&str>, addons: usize) -> String {
    let k8s = kubernetes_version.map_or(String::new(), |v| format!("Kubernetes {}, ", one_line(v)));
    format!(
        "first recorded inventory: {k8s}{addons} addon{}",
        if addons == 1 { "" } else { "s" }
    )
}

/// `4 changes (2 upgraded, 1 added, 1 removed)`, `1 change (1 upgraded)`, `no changes`.
pub(super) fn count_phrase(total: usize, parts: &[(&str, usize)]) -> String {
    if total == 0 {
        return NO_CHANGES.into();
    }
    let list: Vec<String> = parts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let noun = if total == 1 { "change" } else { "changes" };
    format!("{total} {noun} ({})", list.join(", "))
}

/// What a diff side resolved to, in words: `snapshot 3f2a9c1b7e4d #25, recorded …`,
/// `file out/clusterinventory.yaml`, `live object`, `commit 1a2b3c4d5e6f`, then its
/// `renderedAt` (and its domain when `domain` is set); on one line, not escaped for
/// any markup.
pub fn resolution(e: &crate::history::diff::Endpoint, domain: bool) -> String {
    let short = |id: &str| one_line(&id.chars().take(HASH_CHARS).collect::<String>());
    let mut parts: Vec<String> = Vec::new();
    match (e.source.as_deref(), e.resolved.as_deref()) {
        (Some("snapshot"), id) => {
            let mut s = format!("snapshot {}", id.map(short).unwrap_or_default());
            if let Some(r) = e.revision {
                s.push_str(&format!(" #{r}"));
            }
            parts.push(s);
            if let Some(at) = &e.recorded_at {
                parts.push(format!("recorded {}", one_line(at)));
            }
        }
        (Some("file"), Some(path)) if Some(path) != e.reference.as_deref() => {
            parts.push(format!("file {}", one_line(path)));
        }
        (Some("cluster"), _) => parts.push("live object".into()),
        (Some("git"), Some(commit)) => parts.push(format!("commit {}", short(commit))),
        (Some(source), _) => parts.push(one_line(source)),
        (None, _) => {}
    }
    if domain && let Some(d) = &e.domain {
        parts.push(format!("domain {}", one_line(d)));
    }
    if let Some(at) = &e.rendered_at {
        parts.push(format!("rendered {}", one_line(at)));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::diff::Entry;

    fn change(field: Field, op: Op, from: Option<&str>, to: Option<&str>) -> Change {
        Change {
            path: String::new(),
            field,
            change: op,
            addon: None,
            occurrence: None,
            from: from.map(Into::into),
            to: to.map(Into::into),
            entry: None,
        }
    }

    #[test]
    fn phrases_read_like_helm_diff_lines() {
        let mut c = change(
            Field::ChartVersion,
            Op::Upgraded,
            Some("1.19.2"),
            Some("1.20.1"),
        );
        c.addon = Some("cilium".into());
        c.occurrence = Some(1);
        assert_eq!(Phrase::of(&c).line(), "~ cilium 1.19.2 → 1.20.1 (upgrade)");
        c.occurrence = Some(2);
        c.field = Field::Category;
        c.change = Op::Changed;
        assert_eq!(Phrase::of(&c).line(), "~ cilium#2 category 1.19.2 → 1.20.1");
        let k = change(
            Field::KubernetesVersion,
            Op::Changed,
            Some("v1.31"),
            Some("v1.32"),
        );
        assert_eq!(
            Phrase::of(&k).line(),
            "~ kubernetesVersion v1.31 → v1.32 (unordered)"
        );
        let h = change(Field::SpecHash, Op::Changed, None, Some("0123456789abcdef"));
        assert_eq!(Phrase::of(&h).line(), "~ specHash (none) → 0123456789ab…");
        let mut add = change(Field::Addon, Op::Added, None, Some("v1.16.4"));
        add.addon = Some("rook-ceph".into());
        add.entry = Some(Entry {
            name: "rook-ceph".into(),
            source: Some("target".into()),
            chart_version: Some("v1.16.4".into()),
            category: Some("storage".into()),
            app_version: None,
        });
        assert_eq!(
            Phrase::of(&add).line(),
            "+ rook-ceph v1.16.4 (storage, target)"
        );
        let mut gone = change(Field::Addon, Op::Removed, Some("3.12.2"), None);
        gone.addon = Some("metrics-server".into());
        assert_eq!(Phrase::of(&gone).line(), "- metrics-server 3.12.2");
    }

    #[test]
    fn control_characters_never_reach_the_output() {
        let c = change(
            Field::Kind,
            Op::Changed,
            Some("a\u{1b}[2J\nb"),
            Some("c\td"),
        );
        assert_eq!(Phrase::of(&c).line(), "~ kind a\\u{1b}[2J\\nb → c\\td");
    }
}
