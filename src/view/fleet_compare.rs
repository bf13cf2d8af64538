//! `clinv fleet --against`: the comparison of two selections as a table (counts; `-o
//! wide`: the domains running each version, and the category), markdown, and JSON/YAML.

use crate::inventory::render;
use crate::ops::fleet::compare::{self, Comparison, Held, Running, Side};
use crate::view::table::Table;
use serde::Serialize;

/// What a side holds as printed: the version, `*` without one, `-` not deployed.
fn held(held: &Held) -> &str {
    match held {
        Held::Version(v) => v,
        Held::Unversioned => "*",
        Held::Absent => "-",
    }
}

/// One side's cell: what every domain of the side holds, bare; else each holding with how
/// many domains hold it, or with `wide` which ones.
fn cell(side: &[Running], wide: bool) -> String {
    if let [one] = side {
        return held(&one.held).to_string();
    }
    let part = |r: &Running| match wide {
        true => format!("{} ({})", held(&r.held), r.domains.join(", ")),
        false => format!("{} ({})", held(&r.held), r.domains.len()),
    };
    side.iter().map(part).collect::<Vec<_>>().join(", ")
}

/// A side's column header: its selection and how many domains were compared.
fn header(side: &Side) -> String {
    let n = side.domains.len();
    let s = if n == 1 { "" } else { "s" };
    format!("{} ({n} domain{s})", compare::label(side))
}

fn grid(c: &Comparison, wide: bool) -> Vec<Vec<String>> {
    let mut head = vec!["ADDON".to_string()];
    head.extend(wide.then(|| "CATEGORY".to_string()));
    head.extend(c.sides.iter().map(header));
    let mut grid = vec![head];
    for row in &c.rows {
        let mut line = vec![row.addon.clone()];
        line.extend(wide.then(|| row.category.clone().unwrap_or_else(|| "-".into())));
        line.extend(row.sides.iter().map(|s| cell(s, wide)));
        grid.push(line);
    }
    grid
}

/// The table: a row per addon that differs; empty when none does.
pub fn table(c: &Comparison, wide: bool, no_headers: bool) -> String {
    if c.rows.is_empty() {
        return String::new();
    }
    let grid = grid(c, wide);
    let header: Vec<&str> = grid[0].iter().map(String::as_str).collect();
    let mut table = Table::new(&header).no_header(no_headers);
    for line in &grid[1..] {
        table.row(line);
    }
    table.render()
}

/// A markdown table (for a pull request or a wiki page); empty when nothing differs.
pub fn markdown(c: &Comparison) -> String {
    if c.rows.is_empty() {
        return String::new();
    }
    let cell = |t: &str| crate::util::redact::escape_line(t).replace('|', "\\|");
    let mut out = String::new();
    for (i, line) in grid(c, false).iter().enumerate() {
        let cells: Vec<String> = line.iter().map(|t| cell(t)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
        if i == 0 {
            out.push_str(&format!("|{}\n", "---|".repeat(line.len())));
        }
    }
    out
}

/// What the comparison says on stderr: which side is the rest of the fleet, the addons
/// alike (not shown), or that nothing differs (`addon`: the one `--addon` asked for).
pub fn notes(c: &Comparison, addon: Option<&str>) -> Vec<String> {
    let [one, two] = &c.sides;
    let mut notes = Vec::new();
    if one.selection.is_none() {
        let n = one.domains.len();
        notes.push(format!(
            "comparing {} with the rest of the fleet ({n} domain{})",
            compare::label(two),
            if n == 1 { "" } else { "s" }
        ));
    }
    let same = c.same.len();
    if c.rows.is_empty() && same == 0 {
        // An --addon no domain has was said as such; one that only other domains run is
        // not "the same".
        if c.unknown_addon.is_none() {
            let (a, b) = (compare::label(one), compare::label(two));
            let what = addon.map_or("any addon".to_string(), crate::util::redact::escape_line);
            notes.push(format!("neither {a} nor {b} runs {what}"));
        }
    } else if c.rows.is_empty() {
        let (a, b) = (compare::label(one), compare::label(two));
        notes.push(match same {
            1 => format!("{a} and {b} run the same version of their one addon"),
            n => format!("{a} and {b} run the same versions of all {n} addons"),
        });
    } else if same > 0 {
        let listed = |names: &[String]| match names.len() {
            0..=10 => names.join(", "),
            n => format!("{} and {} more", names[..10].join(", "), n - 10),
        };
        let (noun, verb) = if same == 1 {
            ("addon", "runs")
        } else {
            ("addons", "run")
        };
        notes.push(format!(
            "{same} {noun} {verb} the same versions on both sides ({}): not shown",
            listed(&c.same)
        ));
    }
    notes
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Doc<'a> {
    schema_version: u32,
    kind: &'static str,
    source: &'static str,
    sides: Vec<SideDoc<'a>>,
    /// The addons whose sides differ.
    addons: Vec<AddonDoc<'a>>,
    /// The addons both sides run alike.
    same: &'a [String],
}

#[derive(Serialize)]
struct SideDoc<'a> {
    /// The patterns as given; `null`: the rest of the fleet.
    selection: Option<&'a [String]>,
    domains: &'a [String],
    left: &'a [crate::ops::fleet::Left],
}

#[derive(Serialize)]
struct AddonDoc<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    category: Option<&'a str>,
    sides: [Vec<RunningDoc<'a>>; 2],
}

/// A holding: `version` (`null`: deployed without one), or `absent: true`.
#[derive(Serialize)]
struct RunningDoc<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<Option<&'a str>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    absent: bool,
    domains: &'a [String],
}

impl<'a> RunningDoc<'a> {
    fn of(r: &'a Running) -> RunningDoc<'a> {
        let version = match &r.held {
            Held::Version(v) => Some(Some(v.as_str())),
            Held::Unversioned => Some(None),
            Held::Absent => None,
        };
        RunningDoc {
            version,
            absent: r.held == Held::Absent,
            domains: &r.domains,
        }
    }
}

/// `-o json` (`-o yaml` is the same document).
///
/// # Errors
/// serde's, which this document does not produce.
pub fn json(c: &Comparison) -> crate::error::Result<String> {
    let sides = c
        .sides
        .iter()
        .map(|s| SideDoc {
            selection: s.selection.as_deref(),
            domains: &s.domains,
            left: &s.left,
        })
        .collect();
    let addons = c
        .rows
        .iter()
        .map(|r| AddonDoc {
            name: &r.addon,
            category: r.category.as_deref(),
            sides: [&r.sides[0], &r.sides[1]].map(|s| s.iter().map(RunningDoc::of).collect()),
        })
        .collect();
    render::to_json(&Doc {
        schema_version: 1,
        kind: "FleetComparison",
        source: c.source.word(),
        sides,
        addons,
        same: &c.same,
    })
}

/// `fleet --against`: what differs between the two selections, said.
///
/// In the `-o` format asked for (`-o html`, the matrix's page, is the caller's usage
/// error); exit as `diff`: 0 same, 1 different, 2 a domain of a side not read (16: a
/// cluster).
///
/// # Errors
/// A selection or write error; `--strict` with an addon no domain runs.
pub fn say(
    cx: crate::ops::context::Context<'_>,
    ask: &crate::view::fleet_answer::Ask<'_>,
    matrix: crate::ops::fleet::Matrix,
    not_read: bool,
) -> crate::error::Result<i32> {
    use crate::view::format::FleetFormat;
    let selections = compare::Selections {
        one: ask.many,
        against: ask.against,
        addon: ask.addon,
    };
    let c = compare::compare(&matrix, selections, |_| crate::error::UnknownIn::Nowhere)?;
    if let Some(unknown) = &c.unknown_addon {
        if cx.strict {
            return Err(crate::error::Error::from(unknown.clone()));
        }
        cx.console.warn(&unknown.to_string());
    }
    cx.console.data(&match ask.output.unwrap_or_default() {
        FleetFormat::Json => json(&c)?,
        FleetFormat::Yaml => crate::view::format::yaml(&json(&c)?)?,
        FleetFormat::Markdown => markdown(&c),
        FleetFormat::Wide => table(&c, true, ask.no_headers),
        _ => table(&c, false, ask.no_headers),
    })?;
    c.sides
        .iter()
        .for_each(|s| crate::view::fleet_answer::say_left(cx, &s.left));
    notes(&c, ask.addon).iter().for_each(|n| cx.console.info(n));
    Ok(c.exit_code(not_read))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::fleet::Source;
    use crate::ops::fleet::compare::Differs;

    fn running(held: Held, domains: &[&str]) -> Running {
        Running {
            held,
            domains: domains.iter().map(|d| d.to_string()).collect(),
        }
    }

    fn comparison() -> Comparison {
        let side = |selection: Option<&str>, domains: &[&str]| Side {
            selection: selection.map(|s| vec![s.to_string()]),
            domains: domains.iter().map(|d| d.to_string()).collect(),
            left: Vec::new(),
        };
        Comparison {
            source: Source::Project,
            sides: [side(None, &["a1", "a2", "a3"]), side(Some("b|*"), &["b1"])],
            rows: vec![Differs {
                addon: "cert-manager".into(),
                category: Some("security".into()),
                sides: [
                    vec![
                        running(Held::Version("v1.18.0".into()), &["a1", "a2"]),
                        running(Held::Absent, &["a3"]),
                    ],
                    vec![running(Held::Unversioned, &["b1"])],
                ],
            }],
            same: vec!["cilium".into()],
            unknown_addon: None,
        }
    }

    #[test]
    fn cells_count_or_name_the_domains_and_escape_markdown() {
        let c = comparison();
        assert_eq!(
            table(&c, false, false),
            "ADDON         the rest (3 domains)  b|* (1 domain)\ncert-manager  v1.18.0 (2), - (1)    *\n"
        );
        assert_eq!(
            table(&c, true, true),
            "cert-manager  security  v1.18.0 (a1, a2), - (a3)  *\n"
        );
        assert_eq!(
            markdown(&c),
            "| ADDON | the rest (3 domains) | b\\|* (1 domain) |\n|---|---|---|\n| cert-manager | v1.18.0 (2), - (1) | * |\n"
        );
        assert_eq!(
            notes(&c, None),
            [
                "comparing b|* with the rest of the fleet (3 domains)",
                "1 addon runs the same versions on both sides (cilium): not shown"
            ]
        );
    }

    #[test]
    fn json_says_absent_and_unversioned_apart() {
        let v: serde_json::Value = serde_json::from_str(&json(&comparison()).unwrap()).unwrap();
        assert_eq!(v["sides"][0]["selection"], serde_json::Value::Null);
        let sides = &v["addons"][0]["sides"];
        assert_eq!(
            sides[0],
            serde_json::json!([
                {"version": "v1.18.0", "domains": ["a1", "a2"]},
                {"absent": true, "domains": ["a3"]}
            ])
        );
        assert_eq!(
            sides[1],
            serde_json::json!([{"version": null, "domains": ["b1"]}])
        );
    }
}
