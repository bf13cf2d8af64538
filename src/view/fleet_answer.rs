//! `clinv fleet`'s answer: the matrix filtered as asked, said in its `-o` format — the
//! table or markdown ([`super::fleet`]), JSON/YAML, the page ([`super::fleet_html`]) —
//! and what it leaves out.

use super::fleet::{json, markdown, table};
use crate::error::Result;
use crate::ops::context::Context;
use crate::ops::fleet::{Matrix, Query};
use crate::view::format::FleetFormat;

/// What `fleet` asked of the matrix: the filters, `--behind-index` and how to fetch it,
/// the layout and `-o`; `--against`'s sides.
pub struct Ask<'a> {
    pub behind_index: Option<&'a str>,
    pub fetch: crate::catalog::fetch::Options,
    pub output: Option<FleetFormat>,
    pub addon: Option<&'a str>,
    pub below: Option<&'a str>,
    pub above: Option<&'a str>,
    pub differs: bool,
    pub changed_only: bool,
    pub by_domain: bool,
    pub no_headers: bool,
    /// `--domain`, `-A`: `--against`'s first side.
    pub many: crate::project::select::Many<'a>,
    pub against: &'a [String],
}

/// `clinv fleet`: the matrix filtered as asked, said in the `-o` format, then what it
/// leaves out; the exit code ([`Matrix::exit_code`]).
///
/// # Errors
/// An index, bound or write error; `--strict` with an addon no domain runs.
pub fn say(cx: Context<'_>, ask: &Ask<'_>, matrix: Matrix, not_read: bool) -> Result<i32> {
    cx.warnings(&matrix.warnings)?;
    let index = match ask.behind_index {
        Some(text) => {
            let index_ref = crate::catalog::fetch::IndexRef::parse(text)?;
            let loaded = crate::catalog::fetch::load(&index_ref, &ask.fetch)?;
            for w in &loaded.warnings {
                cx.console.warn(w);
            }
            Some(loaded.index)
        }
        None => None,
    };
    // A page colours what --behind-index and --differs find; the other formats keep only it.
    let html = ask.output == Some(FleetFormat::Html);
    let query = Query {
        addon: ask.addon,
        below: ask.below,
        above: ask.above,
        behind: index.as_ref().filter(|_| !html),
        differs: ask.differs && !html,
    };
    let mut matrix = matrix.filter(&query)?;
    if ask.changed_only {
        matrix = matrix.changed_only();
    }
    if let Some(unknown) = &matrix.unknown_addon {
        if cx.strict {
            return Err(crate::error::Error::from(unknown.clone()));
        }
        cx.console.warn(&unknown.to_string());
    }
    let by_domain = ask.by_domain;
    let text = match ask.output.unwrap_or_default() {
        FleetFormat::Json => json(&matrix)?,
        FleetFormat::Yaml => crate::view::format::yaml(&json(&matrix)?)?,
        FleetFormat::Markdown => markdown(&matrix, by_domain),
        format @ (FleetFormat::Table | FleetFormat::Wide) => {
            let style = crate::view::TableStyle {
                wide: format == FleetFormat::Wide,
                no_headers: ask.no_headers,
                width: cx.console.width(),
            };
            table(&matrix, by_domain, style)
        }
        FleetFormat::Html => crate::view::fleet_html::page(
            &matrix,
            &matrix.marks(index.as_ref()),
            ask.behind_index,
            by_domain,
        ),
    };
    cx.console.data(&text)?;
    notes(cx, &matrix, &query);
    Ok(matrix.exit_code(not_read))
}

/// The domains with no column, said: deploy domains once at the end of the run, the
/// others each on a line (an error when it should have had one).
pub fn say_left(cx: Context<'_>, left: &[crate::ops::fleet::Left]) {
    for left in left {
        if let Some(cluster_ref) = &left.deploy {
            cx.deploy(&left.domain, cluster_ref.as_deref());
            continue;
        }
        let line = format!("{}: not in the matrix: {}", left.domain, left.why);
        if left.failed || left.other_domain {
            cx.console.error(&line);
        } else {
            cx.console.info(&line);
        }
    }
}

/// What the matrix leaves out, said: domains with no column, versions a bound could not
/// order, and a query that matched nothing.
fn notes(cx: Context<'_>, m: &Matrix, query: &Query<'_>) {
    say_left(cx, &m.left);
    for line in crate::ops::fleet::at::notes(m) {
        cx.console.info(&line);
    }
    if !m.unordered.is_empty() {
        cx.console.warn(&format!(
            "{} version(s) are not SemVer and cannot be compared with the bound, so they are left out: {}",
            m.unordered.len(),
            m.unordered.join(", ")
        ));
    }
    if m.rows.is_empty() && m.unknown_addon.is_none() {
        let what = query.addon.unwrap_or("any addon");
        let what = match (query.behind.is_some(), query.differs) {
            (true, _) => format!("{what} behind the index"),
            (_, true) => format!("{what} at a version other than the majority's"),
            _ => what.to_string(),
        };
        let bound = match (query.below, query.above) {
            (Some(b), Some(a)) => format!(" between {a} and {b}"),
            (Some(b), None) => format!(" below {b}"),
            (None, Some(a)) => format!(" above {a}"),
            (None, None) => String::new(),
        };
        cx.console.info(&format!("no domain runs {what}{bound}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The domains with no column: a deploy domain noted for the end of the run, one
    /// that should have had a column an error, any other an `[info]`.
    #[test]
    fn the_domains_left_out_are_said_by_what_they_are() {
        let left = |domain: &str, failed, deploy| crate::ops::fleet::Left {
            domain: domain.into(),
            why: "why".into(),
            failed,
            other_domain: false,
            deploy,
        };
        let said = crate::console::Recorded::default();
        let deploys = crate::fleet::Deploys::default();
        let cx = Context {
            console: &said,
            strict: false,
            root: None,
            cwd: std::path::Path::new("/"),
            snapshots: None,
            source_date_epoch: None,
            domain_name: None,
            deploys: &deploys,
        };
        let lefts = [
            left("a", true, None),
            left("b", false, Some(Some("p".into()))),
            left("c", false, None),
        ];
        say_left(cx, &lefts);
        assert_eq!(
            said.messages(),
            [
                "[error] a: not in the matrix: why",
                "[info] c: not in the matrix: why"
            ]
        );
        let met = deploys.take();
        assert_eq!(met.get("b"), Some(&Some("p".to_string())));
    }
}
