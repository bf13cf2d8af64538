//! `clinv fleet -o html`: the matrix as one self-contained page.
//!
//! Inline CSS and one inline script, no external resource (its Content-Security-Policy
//! refuses any): the matrix table of [`matrix`], a legend, and the domains that have no
//! column.
//!
//! [`matrix`] is the part another page reuses (the fleet report): the table in a
//! scrolling box with a sticky header row and first column, narrow cells and rotated
//! headers (16 domains fit 1280 px), a filter box for domains and addons, and a filter by
//! category. It stays usable at 1,000 domains: the page never grows wider than the
//! window — the box scrolls both ways under its sticky headers — and the filter narrows
//! the matrix to the domains and addons typed (text, or a glob with `*`).

use crate::ops::fleet::{Marks, Matrix};
use crate::view::report::html::esc;

/// The page's own style: the frame around the matrix (the fleet report's too).
const PAGE_STYLE: &str = "\
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #f6f8fa;
  --behind: #fff1c2; --behind-edge: #d4a72c; --differs: #ddf4ff; --differs-edge: #54aeff;
  --drifting: #ffebe9; --drifting-edge: #cf222e; --queued: #fbefff; --queued-edge: #8250df;
  --changed-edge: #1a7f37; }
body { font: 14px/1.45 -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; color: var(--fg);
  margin: 16px; }
h1 { font-size: 22px; margin: 0; }
header p, .legend { color: var(--muted); margin: 4px 0 12px; }
.legend span { display: inline-block; margin-right: 16px; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 3px; margin-right: 6px;
  vertical-align: -1px; border: 1px solid var(--line); }
code { font: 13px ui-monospace, SFMono-Regular, Menlo, monospace; }
";

/// The matrix's style: sticky headers, narrow cells, rotated column names, colours.
const MATRIX_STYLE: &str = "\
.filters { margin: 8px 0 12px; }
.filters input[type=radio] { position: absolute; opacity: 0; }
.filters label { display: inline-block; padding: 3px 10px; margin: 0 6px 6px 0; border: 1px solid var(--line);
  border-radius: 999px; cursor: pointer; font-size: 13px; }
.filters input:checked + label { background: var(--fg); color: #fff; }
.search { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 0 0 8px; }
.search input { font: inherit; padding: 4px 8px; border: 1px solid var(--line); border-radius: 6px; width: 260px; }
.search output, .search .hint { color: var(--muted); font-size: 13px; }
.wrap { overflow: auto; width: fit-content; max-width: 100%; max-height: 80vh; border: 1px solid var(--line); border-radius: 6px; }
table.matrix { border-collapse: separate; border-spacing: 0; font-size: 12px; }
.matrix th, .matrix td { padding: 3px 5px; border-bottom: 1px solid var(--line); white-space: nowrap; text-align: left; }
.matrix td { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
.matrix thead th { position: sticky; top: 0; background: var(--soft); z-index: 2; vertical-align: bottom; }
.matrix thead th.rot > span { writing-mode: vertical-rl; transform: rotate(180deg); display: inline-block;
  max-height: 180px; overflow: hidden; text-overflow: ellipsis; font-weight: 600; }
.matrix tbody th, .matrix tfoot th { position: sticky; left: 0; background: #fff; z-index: 1; font-weight: 600;
  border-right: 1px solid var(--line); }
.matrix thead th:first-child { left: 0; z-index: 3; border-right: 1px solid var(--line); }
.matrix tbody tr:hover td, .matrix tbody tr:hover th { background: var(--soft); }
.matrix td.none { color: var(--muted); }
.matrix td.behind { background: var(--behind); box-shadow: inset 3px 0 var(--behind-edge); }
.matrix td.differs { background: var(--differs); box-shadow: inset 3px 0 var(--differs-edge); }
.matrix td.behind.differs { background: var(--behind); box-shadow: inset 3px 0 var(--differs-edge); }
.matrix td.drifting { background: var(--drifting); box-shadow: inset 3px 0 var(--drifting-edge); font-weight: 600; }
.matrix td.queued { background: var(--queued); box-shadow: inset 3px 0 var(--queued-edge); font-style: italic; }
.matrix td.changed { font-weight: 600; text-decoration: underline 2px var(--changed-edge); text-underline-offset: 3px; }
.matrix td.changed::after { content: ' \\25B2'; color: var(--changed-edge); font-size: 10px; }
.matrix tfoot th, .matrix tfoot td { color: var(--muted); border-bottom: 0; }
.matrix .cat { color: var(--muted); font-weight: 400; margin-left: 6px; }
.matrix tbody .cat { display: block; margin: 0; font-size: 11px; line-height: 1.2; }
";

/// The filter box: rows and columns whose name does not match are hidden (plain text
/// matches anywhere in the name, `*` is a glob over the whole name); the count says how
/// many domains are shown.
const MATRIX_SCRIPT: &str = r#"(function () {
  var table = document.getElementById('matrix');
  if (!table) return;
  var rowsAre = table.getAttribute('data-rows');
  var colsAre = rowsAre === 'addon' ? 'domain' : 'addon';
  var q = { domain: document.getElementById('q-domain'), addon: document.getElementById('q-addon') };
  var count = document.getElementById('q-count');
  function matcher(text) {
    text = text.trim().toLowerCase();
    if (!text) return function () { return true; };
    if (text.indexOf('*') < 0) return function (name) { return name.indexOf(text) >= 0; };
    var re = new RegExp('^' + text.split('*').map(function (part) {
      return part.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
    }).join('.*') + '$');
    return function (name) { return re.test(name); };
  }
  function apply() {
    var rowOk = matcher(q[rowsAre].value), colOk = matcher(q[colsAre].value);
    var heads = table.tHead.rows[0].cells, hide = [], cols = 0, rows = 0;
    for (var i = 1; i < heads.length; i++) {
      hide[i] = !colOk(heads[i].getAttribute('data-k').toLowerCase());
      heads[i].hidden = hide[i];
      if (!hide[i]) cols++;
    }
    var body = table.tBodies[0].rows;
    for (var r = 0; r < body.length; r++) {
      body[r].hidden = !rowOk(body[r].getAttribute('data-k').toLowerCase());
      if (!body[r].hidden) rows++;
    }
    var all = table.querySelectorAll('tbody tr, tfoot tr');
    for (var a = 0; a < all.length; a++) {
      var cells = all[a].cells;
      for (var c = 1; c < cells.length; c++) cells[c].hidden = hide[c];
    }
    var domains = rowsAre === 'domain' ? rows : cols;
    count.value = domains + ' of ' + table.getAttribute('data-domains') + ' domains';
  }
  q.domain.addEventListener('input', apply);
  q.addon.addEventListener('input', apply);
  apply();
})();
"#;

/// The matrix table of a page, with what it needs around it: the page puts `css` in its
/// `<style>`, `html` where the matrix goes, and `script` in a `<script>` after it.
pub struct Fragment {
    pub css: String,
    pub html: String,
    pub script: &'static str,
}

/// A page's head, up to `<body>`: nothing may be loaded from anywhere (the inline style,
/// `css` after the page's own, and the matrix's inline script only).
pub fn head(title: &str, css: &str) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
    );
    out.push_str(&format!("<title>{}</title>\n<style>\n", esc(title)));
    out.push_str(PAGE_STYLE);
    out.push_str(css);
    out.push_str("</style>\n</head>\n");
    out
}

/// The page. `marks` colours cells; `index` names the addon index of "behind";
/// `by_domain` makes a row of each domain (`--by domain`).
pub fn page(m: &Matrix, marks: &Marks, index: Option<&str>, by_domain: bool) -> String {
    let fragment = section(m, marks, index, by_domain);
    let mut out = head("clinv fleet", &fragment.css);
    out.push_str("<body>\n<header>\n<h1>Fleet inventory</h1>\n");
    out.push_str(&format!(
        "<p>{} domain(s), {} addon(s), from the {} — generated by clinv {}</p>\n</header>\n",
        m.domains.len(),
        m.rows.len(),
        m.source.word(),
        env!("CARGO_PKG_VERSION")
    ));
    out.push_str(&fragment.html);
    out.push_str("<script>\n");
    out.push_str(fragment.script);
    out.push_str("</script>\n</body>\n</html>\n");
    out
}

/// The matrix as a page shows it (the fleet page, the fleet report): its legends, the
/// [`matrix`], and the domains that have no column.
pub fn section(m: &Matrix, marks: &Marks, index: Option<&str>, by_domain: bool) -> Fragment {
    let mut fragment = matrix(m, marks, by_domain);
    let mut html = legend(index, m);
    html.push_str(&changed_legend(m));
    html.push_str(&fragment.html);
    for left in &m.left {
        html.push_str(&format!(
            "<p class=\"legend\">{}: not in the matrix: {}</p>\n",
            esc(&left.domain),
            esc(&left.why)
        ));
    }
    fragment.html = html;
    fragment
}

/// The matrix table (rows per addon, or per domain with `by_domain`) in its scrolling
/// box, under its filter box and (rows per addon) its category filter.
pub fn matrix(m: &Matrix, marks: &Marks, by_domain: bool) -> Fragment {
    let mut css = String::from(MATRIX_STYLE);
    if !by_domain {
        css.push_str(&filter_css(m));
    }
    let mut html = search(m, by_domain);
    html.push_str("<div class=\"filters\">\n");
    if !by_domain {
        html.push_str(&filters(m));
    }
    // The table follows the radio inputs as a sibling, so `:checked ~ .wrap` reaches it.
    html.push_str(&format!(
        "<div class=\"wrap\">\n<table class=\"matrix\" id=\"matrix\" data-rows=\"{}\" data-domains=\"{}\">\n",
        if by_domain { "domain" } else { "addon" },
        m.domains.len()
    ));
    html.push_str(&match by_domain {
        true => by_domain_rows(m, marks),
        false => by_addon_rows(m, marks),
    });
    html.push_str("</table>\n</div>\n</div>\n");
    Fragment {
        css,
        html,
        script: MATRIX_SCRIPT,
    }
}

/// The legend: the live clusters' page can drift, the store's newest snapshots can be
/// queued (the store at a date is history: nothing there is marked queued).
fn legend(index: Option<&str>, m: &Matrix) -> String {
    use crate::ops::fleet::Source;
    let behind = match index {
        Some(i) => format!("behind the index <code>{}</code>", esc(i)),
        None => "behind the index (pass --behind-index)".to_string(),
    };
    let swatch = |var: &str, text: &str| {
        format!("<span><i class=\"swatch\" style=\"background:var(--{var})\"></i>{text}</span>")
    };
    let drifting = match m.source {
        Source::Live => swatch(
            "drifting",
            "drifting: live, and not what the project renders",
        ),
        Source::Store if m.as_of.is_none() => swatch(
            "queued",
            "queued: in a pending snapshot, not on the cluster yet",
        ),
        Source::Store | Source::Project | Source::Repo => String::new(),
    };
    format!(
        "<p class=\"legend\"><span><i class=\"swatch\" style=\"background:var(--behind)\"></i>{behind}</span>\
<span><i class=\"swatch\" style=\"background:var(--differs)\"></i>differs from the majority of the domains that deploy it (both: a blue edge on yellow)</span>{drifting}\
<span><code>*</code> deployed without a chart version</span><span><code>-</code> not deployed</span></p>\n"
    )
}

/// Past this many domain columns the matrix is wider than a window: the page says how
/// to narrow it.
const MANY: usize = 40;

/// The filter box: a field for domains, one for addons, and how many are shown.
fn search(m: &Matrix, by_domain: bool) -> String {
    let hint = match !by_domain && m.domains.len() > MANY {
        true => {
            "<span class=\"hint\">scroll the matrix, filter it, or make a row of each domain (--by domain)</span>"
        }
        false => "",
    };
    format!(
        "<p class=\"search\"><input type=\"search\" id=\"q-domain\" placeholder=\"filter domains (glob: fsn-*)\" aria-label=\"filter domains\">\
<input type=\"search\" id=\"q-addon\" placeholder=\"filter addons\" aria-label=\"filter addons\">\
<output id=\"q-count\" for=\"q-domain q-addon\">{0} of {0} domains</output>{hint}</p>\n",
        m.domains.len()
    )
}

/// The categories, in order of first appearance; `none` for rows without one.
fn categories(m: &Matrix) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &m.rows {
        let c = class_of(r.category.as_deref());
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// A category as a CSS class: letters, digits and `-` only.
fn class_of(category: Option<&str>) -> String {
    let c: String = category
        .unwrap_or("uncategorised")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    format!("c-{c}")
}

/// A checked radio button hides every row of another category (CSS only).
fn filter_css(m: &Matrix) -> String {
    let mut css = String::new();
    for c in categories(m) {
        css.push_str(&format!(
            "#f-{c}:checked ~ .wrap tbody tr:not(.{c}) {{ display: none; }}\n"
        ));
    }
    css
}

fn filters(m: &Matrix) -> String {
    let mut out = String::from(
        "<input type=\"radio\" name=\"f\" id=\"f-all\" checked><label for=\"f-all\">all</label>\n",
    );
    for c in categories(m) {
        out.push_str(&format!(
            "<input type=\"radio\" name=\"f\" id=\"f-{c}\"><label for=\"f-{c}\">{}</label>\n",
            esc(c.trim_start_matches("c-"))
        ));
    }
    out
}

/// A column header: its short name rotated, the whole name as its title and key.
fn column_head(name: &str, short: &str) -> String {
    format!(
        "<th class=\"rot\" data-k=\"{0}\" title=\"{0}\"><span>{1}</span></th>",
        esc(name),
        esc(short)
    )
}

/// The classes of a cell from the marks (the colours of the legend).
fn classes(marks: &Marks, key: &(String, usize)) -> Vec<&'static str> {
    let mut class = Vec::new();
    for (set, name) in [
        (&marks.behind, "behind"),
        (&marks.differs, "differs"),
        (&marks.drifting, "drifting"),
        (&marks.queued, "queued"),
    ] {
        if set.contains(key) {
            class.push(name);
        }
    }
    class
}

/// The cell of `row` in domain column `c`.
fn cell(marks: &Marks, row: &crate::ops::fleet::Row, c: usize) -> String {
    let key = (row.addon.clone(), c);
    let mut class = classes(marks, &key);
    // --changed-since: the cell's title says what it was.
    let title = marks.changed.get(&key).map(|was| {
        class.push("changed");
        format!(" title=\"{}\"", esc(was))
    });
    let text = match row.cells.get(&c) {
        Some(cell) => cell.version.as_deref().map_or("*".to_string(), esc),
        None => {
            class.push("none");
            "-".to_string()
        }
    };
    let title = title.unwrap_or_default();
    format!("<td class=\"{}\"{title}>{text}</td>", class.join(" "))
}

/// The addon's header cell: its name and category.
fn addon_head(row: &crate::ops::fleet::Row) -> String {
    format!(
        "<th data-k=\"{0}\"><code>{0}</code>{1}</th>",
        esc(&row.addon),
        row.category
            .as_deref()
            .map(|c| format!("<span class=\"cat\">{}</span>", esc(c)))
            .unwrap_or_default()
    )
}

/// A row per addon, a column per domain (headers without the shared suffix).
fn by_addon_rows(m: &Matrix, marks: &Marks) -> String {
    let suffix = super::fleet::shared_suffix(&m.domains);
    let suffix = suffix.as_str();
    let mut out = String::from("<thead><tr><th data-k=\"\">Addon");
    if !suffix.is_empty() {
        out.push_str(&format!(
            " <span class=\"cat\">domains: *{}</span>",
            esc(suffix)
        ));
    }
    out.push_str("</th>");
    for d in &m.domains {
        out.push_str(&column_head(d, d.strip_suffix(suffix).unwrap_or(d)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for r in &m.rows {
        out.push_str(&format!(
            "<tr class=\"{}\" data-k=\"{}\">{}",
            class_of(r.category.as_deref()),
            esc(&r.addon),
            addon_head(r)
        ));
        for c in 0..m.domains.len() {
            out.push_str(&cell(marks, r, c));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n");
    out.push_str(&delivered_row(m));
    out
}

/// A row per domain, a column per addon (`--by domain`); a store's delivery is the
/// last column.
fn by_domain_rows(m: &Matrix, marks: &Marks) -> String {
    let mut out = String::from("<thead><tr><th data-k=\"\">Domain</th>");
    for r in &m.rows {
        out.push_str(&column_head(&r.addon, &r.addon));
    }
    let delivered = !m.delivered.is_empty();
    if delivered {
        out.push_str("<th class=\"rot\" data-k=\"delivered\"><span>delivered</span></th>");
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (c, d) in m.domains.iter().enumerate() {
        out.push_str(&format!("<tr data-k=\"{0}\"><th>{0}</th>", esc(d)));
        for r in &m.rows {
            out.push_str(&cell(marks, r, c));
        }
        if delivered {
            out.push_str(&delivered_cell(m, d));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n");
    out
}

/// Where a domain's newest snapshot went besides the cluster, the full registry
/// reference in the cell's title.
fn delivered_cell(m: &Matrix, domain: &str) -> String {
    let title = m.delivered.get(domain).and_then(|c| c.pushed.as_deref());
    let title = title.map(|r| format!(" title=\"{}\"", esc(r)));
    format!(
        "<td{}>{}</td>",
        title.unwrap_or_default(),
        esc(&super::fleet::delivered(m, domain, false))
    )
}

/// A store's page ends with where each domain's newest snapshot went besides the
/// cluster; nothing when none went.
fn delivered_row(m: &Matrix) -> String {
    if m.delivered.is_empty() {
        return String::new();
    }
    let mut out = String::from("<tfoot><tr><th>delivered</th>");
    for d in &m.domains {
        out.push_str(&delivered_cell(m, d));
    }
    out.push_str("</tr></tfoot>\n");
    out
}

/// `--at` and `--changed-since`: the date shown and the mark of a changed cell.
fn changed_legend(m: &Matrix) -> String {
    let mut parts = Vec::new();
    if let Some(at) = &m.as_of {
        parts.push(format!(
            "<span>as it was at <code>{}</code> ({})</span>",
            esc(&at.date),
            esc(&at.until)
        ));
    }
    if let Some(since) = m.changed.as_ref().and_then(|c| c.since.as_ref()) {
        parts.push(format!(
            "<span class=\"changed-legend\"><b style=\"text-decoration: underline 2px var(--changed-edge)\">1.2.3 &#x25B2;</b> changed since <code>{}</code> ({}): the cell's title says what it was</span>",
            esc(&since.date),
            esc(&since.until)
        ));
    }
    match parts.is_empty() {
        true => String::new(),
        false => format!("<p class=\"legend\">{}</p>\n", parts.join("")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::fleet::Source;
    use crate::store::segments::Channels;

    /// Two domains, one hostile addon name and a store's delivery.
    fn matrix() -> Matrix {
        let rows = [("<script>\"a", vec![(0, Some("1.0.0")), (1, Some("2.0.0"))])];
        let domains = ["lab.x.example", "prod.x.example"];
        let mut m = crate::ops::fleet::fixture(Source::Store, &domains, &rows);
        let pushed = Channels {
            pushed: Some("oci://r.example/p@sha256:ab".into()),
            committed: false,
        };
        m.delivered = [("prod.x.example".to_string(), pushed)].into();
        m
    }

    /// Both orientations hold every cell and the delivery; a name is escaped in text,
    /// key and title alike (the filter script reads keys, never HTML).
    #[test]
    fn both_orientations_hold_every_cell_and_escape_names() {
        let m = matrix();
        for by_domain in [false, true] {
            let f = matrix_fragment(&m, by_domain);
            assert!(!f.html.contains("<script>"), "{}", f.html);
            assert!(f.html.contains("&lt;script&gt;&quot;a"), "{}", f.html);
            assert!(f.html.contains(">1.0.0</td>") && f.html.contains(">2.0.0</td>"));
            assert!(
                f.html
                    .contains("title=\"oci://r.example/p@sha256:ab\">pushed</td>"),
                "{}",
                f.html
            );
            assert!(f.script.contains("getAttribute('data-k')"));
        }
        let rows = matrix_fragment(&m, true).html;
        assert!(rows.contains("<tr data-k=\"lab.x.example\"><th>lab.x.example</th>"));
        assert!(rows.contains("data-k=\"delivered\""), "{rows}");
        let columns = matrix_fragment(&m, false).html;
        assert!(columns.contains("title=\"prod.x.example\"><span>prod</span>"));
        assert!(
            columns.contains("<tfoot><tr><th>delivered</th>"),
            "{columns}"
        );
    }

    /// The store's newest snapshots can be queued, and the legend says what that mark
    /// is; the store at a date (`--at`, the fleet report) is history, never marked
    /// queued, so its legend does not name the mark.
    #[test]
    fn the_queued_legend_is_only_where_a_cell_can_be_queued() {
        let mut m = matrix();
        let legend = |m: &Matrix| section(m, &Marks::default(), None, false).html;
        assert!(legend(&m).contains("queued: in a pending snapshot"));
        let now = jiff::Timestamp::now();
        m.as_of = Some(
            crate::ops::fleet::at::AsOf::parse("2026-03-01", now)
                .unwrap()
                .0,
        );
        assert!(!legend(&m).contains("queued"), "{}", legend(&m));
    }

    fn matrix_fragment(m: &Matrix, by_domain: bool) -> Fragment {
        super::matrix(m, &Marks::default(), by_domain)
    }
}
