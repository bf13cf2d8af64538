//! The closing table of a command over several domains (`replay -A`, `publish -A`,
//! `commit -A`): what happened to each domain, as a table or the rows of `-o json|yaml`.

/// One domain's row: what happened, and the detail (a snapshot, a server, a commit).
#[derive(Debug, serde::Serialize)]
pub struct Row {
    pub domain: String,
    pub result: String,
    pub detail: String,
}

impl Row {
    pub fn new(domain: &str, result: impl Into<String>, detail: impl Into<String>) -> Row {
        Row {
            domain: domain.to_string(),
            result: result.into(),
            detail: detail.into(),
        }
    }
}

/// DOMAIN, RESULT, DETAIL: the detail cut with `…` to fit `style.width` unless wide.
pub fn table(rows: &[Row], style: crate::view::TableStyle) -> String {
    fitted(
        ["DOMAIN", "RESULT", "DETAIL"],
        rows.iter()
            .map(|r| [r.domain.as_str(), r.result.as_str(), r.detail.as_str()]),
        style,
    )
}

/// Says the closing rows of a command over several domains, in the `-o` format asked for.
///
/// # Errors
/// An encoding or write error.
pub fn say(
    console: &dyn crate::console::Console,
    rows: &[Row],
    format: crate::view::format::ResultsFormat,
) -> crate::Result<()> {
    use crate::view::format::ResultsFormat;
    let json = || crate::inventory::render::to_json(&rows);
    console.data(&match format {
        format @ (ResultsFormat::Table | ResultsFormat::Wide) => {
            let style = crate::view::TableStyle {
                wide: format == ResultsFormat::Wide,
                no_headers: false,
                width: console.width(),
            };
            table(rows, style)
        }
        ResultsFormat::Json => json()?,
        ResultsFormat::Yaml => crate::view::format::yaml(&json()?)?,
    })
}

/// A table of a word per domain and a detail (`drift -A`'s verdicts too): the last
/// column is the free text that gives way to fit the width (`-o wide`: whole).
pub fn fitted<'a>(
    header: [&str; 3],
    rows: impl Iterator<Item = [&'a str; 3]>,
    style: crate::view::TableStyle,
) -> String {
    let mut table = crate::view::table::Table::new(&header).no_header(style.no_headers);
    for row in rows {
        table.row(&row);
    }
    let width = style.width.filter(|_| !style.wide);
    table.render_fit(width, 2)
}

/// The deploy domains the run met, in one `[info]` line (`-q` hides it), said once.
pub fn say_deploy_domains(console: &dyn crate::console::Console, met: &crate::fleet::Deploys) {
    if let Some(line) = deploy_domains_line(&met.take()) {
        console.info(&line);
    }
}

/// How many names the summary lists before "and N more".
const DEPLOY_NAMES: usize = 20;

/// The deploy domains a run met (with the cluster domain each names), in one line: one
/// domain as its own message, several as a summary grouped by the cluster that carries
/// them; `None` for none.
pub fn deploy_domains_line(
    met: &std::collections::BTreeMap<String, Option<String>>,
) -> Option<String> {
    if let [(domain, cluster_ref)] = met.iter().collect::<Vec<_>>()[..] {
        let one = crate::error::DomainError::DeployOnly {
            domain: domain.clone(),
            cluster_ref: cluster_ref.clone(),
        };
        return Some(one.to_string());
    }
    if met.is_empty() {
        return None;
    }
    let mut by_cluster: std::collections::BTreeMap<Option<&str>, Vec<&str>> = Default::default();
    for (domain, cluster) in met.iter().take(DEPLOY_NAMES) {
        by_cluster
            .entry(cluster.as_deref())
            .or_default()
            .push(domain);
    }
    let more = match met.len().saturating_sub(DEPLOY_NAMES) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let head = format!(
        "{} deploy domains have no inventory of their own",
        met.len()
    );
    let clusters: std::collections::BTreeSet<Option<&str>> =
        met.values().map(Option::as_deref).collect();
    if let [Some(cluster)] = clusters.into_iter().collect::<Vec<_>>()[..] {
        let names = by_cluster.into_values().flatten().collect::<Vec<_>>();
        return Some(format!(
            "{head}: {}{more} (their cluster {cluster} carries it: clinv render --domain {cluster})",
            names.join(", ")
        ));
    }
    let groups: Vec<String> = by_cluster
        .into_iter()
        .map(|(cluster, names)| {
            let into = cluster.map_or("no spec.clusterRef.domain".to_string(), |c| {
                format!("cluster {c}")
            });
            format!("{} ({into})", names.join(", "))
        })
        .collect();
    Some(format!(
        "{head}: {}{more}; each cluster carries its deploy domains' (clinv render --domain CLUSTER)",
        groups.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::deploy_domains_line;
    use std::collections::BTreeMap;

    fn met(pairs: &[(&str, Option<&str>)]) -> BTreeMap<String, Option<String>> {
        pairs
            .iter()
            .map(|(d, c)| (d.to_string(), c.map(str::to_string)))
            .collect()
    }

    #[test]
    fn deploy_domains_are_one_line_grouped_by_cluster() {
        assert_eq!(deploy_domains_line(&met(&[])), None);
        assert_eq!(
            deploy_domains_line(&met(&[("a", Some("p"))])).unwrap(),
            "'a' is a deploy domain: it has no inventory of its own; its cluster 'p' carries the inventory (clinv render --domain p)"
        );
        assert_eq!(
            deploy_domains_line(&met(&[
                ("b", Some("p")),
                ("a", Some("q")),
                ("c", None),
                ("d", Some("p"))
            ]))
            .unwrap(),
            "4 deploy domains have no inventory of their own: c (no spec.clusterRef.domain); b, d (cluster p); a (cluster q); each cluster carries its deploy domains' (clinv render --domain CLUSTER)"
        );
        let many: Vec<(String, Option<&str>)> =
            (0..25).map(|i| (format!("d{i:02}"), Some("p"))).collect();
        let many: Vec<(&str, Option<&str>)> = many.iter().map(|(d, c)| (d.as_str(), *c)).collect();
        let line = deploy_domains_line(&met(&many)).unwrap();
        assert!(
            line.starts_with("25 deploy domains have no inventory of their own: d00, d01,"),
            "{line}"
        );
        assert!(
            line.contains("d19 and 5 more (their cluster p carries it"),
            "{line}"
        );
        assert!(!line.contains("d20"), "{line}");
    }
}
