//! The `-o` vocabulary of every command.
//!
//! The formats a view can be said in (kubectl's `wide`, `name` and `jsonpath=TEMPLATE`
//! included), below the command line so that the views and flows that say an answer can
//! name them. clap reads them (`ValueEnum`); the
//! help text is their doc comments.

use crate::view::jsonpath::Template;
use clap::ValueEnum;

/// `-o` of the commands that print one document: render, crd, snapshots show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum DocFormat {
    #[default]
    Yaml,
    Json,
}

/// `-o` of the table commands: `addons`, `snapshots list`, `updates`.
///
/// `-o` of the commands that print a table: addons, snapshots list, updates — kubectl's
/// `wide` (more columns), `name` (one name per line) and `jsonpath=TEMPLATE` (the
/// template applied to the command's `-o json` document) included.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum TableFormat {
    #[default]
    Table,
    Wide,
    Name,
    Json,
    /// The `-o json` document as YAML.
    Yaml,
    JsonPath(Template),
}

impl TableFormat {
    pub const PLAIN: [(&'static str, TableFormat); 5] = [
        ("table", TableFormat::Table),
        ("wide", TableFormat::Wide),
        ("name", TableFormat::Name),
        ("json", TableFormat::Json),
        ("yaml", TableFormat::Yaml),
    ];
}

/// A table command's `-o` and table flags (`--no-headers`,
/// `--allow-missing-template-keys`), plain.
#[derive(Debug, Clone)]
pub struct TableAsk {
    pub output: Option<TableFormat>,
    pub no_headers: bool,
    pub allow_missing_template_keys: bool,
}

impl TableAsk {
    /// A table command's answer in the `-o` asked for.
    ///
    /// Its document (`json`, as YAML, or a jsonpath over it), its `names` one a line, or
    /// its `table` in the style asked for (`width`: the terminal's, or `None` for a table
    /// with no free text to fit).
    ///
    /// # Errors
    /// What `json` returns, or a jsonpath error.
    pub fn answer(
        &self,
        width: Option<usize>,
        json: impl Fn() -> crate::Result<String>,
        names: impl FnOnce() -> String,
        table: impl FnOnce(crate::view::TableStyle) -> String,
    ) -> crate::Result<String> {
        Ok(match self.output.clone().unwrap_or_default() {
            TableFormat::Json => json()?,
            TableFormat::Yaml => yaml(&json()?)?,
            TableFormat::JsonPath(template) => {
                jsonpath(&template, &json()?, self.allow_missing_template_keys)?
            }
            TableFormat::Name => names(),
            format => table(crate::view::TableStyle {
                wide: format == TableFormat::Wide,
                no_headers: self.no_headers,
                width,
            }),
        })
    }
}

/// `-o` of the closing table of `replay -A`, `publish` and `commit` over several domains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ResultsFormat {
    /// DETAIL cut with … to fit the terminal (COLUMNS)
    #[default]
    Table,
    /// Every DETAIL whole, however wide
    Wide,
    Json,
    Yaml,
}

/// `-o` of `clinv fleet`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum FleetFormat {
    /// Wider than the terminal (COLUMNS), the domain columns wrap into blocks that each
    /// repeat ADDON; a pipe gets whole lines
    #[default]
    Table,
    /// The table with each addon's category and the full registry references
    Wide,
    Json,
    Yaml,
    Markdown,
    /// One self-contained page: --behind-index and --differs colour cells instead of
    /// leaving the others out
    Html,
}

/// `clinv fleet --by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum FleetBy {
    /// A row per addon, a column per domain
    #[default]
    Addon,
    /// A row per domain, a column per addon
    Domain,
}

/// `-o` of `clinv log`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
    Markdown,
}

/// `-o` of `clinv diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum DiffFormat {
    #[default]
    Text,
    Json,
    Markdown,
    Unified,
}

/// `-o` of the commands that print a short text result: version, status, snapshots
/// verify, snapshots gc.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum TextFormat {
    #[default]
    Text,
    Json,
}

/// `-o` of `clinv drift`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum DriftFormat {
    /// One domain's diff; several domains' table, DETAIL cut with … to fit the terminal
    #[default]
    Text,
    /// Several domains' table with every DETAIL whole (one domain: as text)
    Wide,
    Json,
}

/// `-o` of `clinv report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ReportFormat {
    #[default]
    Html,
    Json,
}

/// `-o` of `clinv push`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum PushFormat {
    /// The reference with its digest
    #[default]
    Text,
    /// repository, tag, digest and url, as `flux push artifact -o json`
    Json,
}

/// How the delivery loop writes its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EventFormat {
    Text,
    Json,
}

/// `-o` of `clinv status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum StatusFormat {
    /// One domain's block; several domains' essential columns, SOURCE cut with … to fit
    /// the terminal (COLUMNS)
    #[default]
    Text,
    /// Several domains' table with every column (LAST COMMITTED, LAST PUSHED) and every
    /// word (one domain: as text)
    Wide,
    Json,
    /// Prometheus' text exposition of what each domain owes, from the store alone (never
    /// the cluster): for node_exporter's textfile collector.
    Prometheus,
}

/// `snapshots list --sort-by`: a column of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SortKey {
    /// When it was recorded (oldest first; AGE sorts the same way, newest first)
    Time,
    Domain,
    State,
    Reason,
    Target,
    Id,
}

/// `-o yaml` of a table command: its `-o json` document, as YAML.
///
/// # Errors
/// The document is not JSON (a bug: every caller serialised it).
pub fn yaml(json: &str) -> crate::Result<String> {
    let doc: serde_json::Value =
        serde_json::from_str(json).map_err(|e| crate::Error::encode("JSON", e))?;
    Ok(crate::yaml::emit::to_string(&doc))
}

/// `-o jsonpath=TEMPLATE`: the template applied to `json`, the command's `-o json`
/// document (the very text `-o json` prints, read back), as kubectl applies it to the
/// object.
///
/// # Errors
/// [`crate::Error::JsonPath`] naming the template and the missing field.
pub fn jsonpath(template: &Template, json: &str, allow_missing: bool) -> crate::Result<String> {
    let doc: serde_json::Value =
        serde_json::from_str(json).map_err(|e| crate::Error::encode("JSON", e))?;
    template
        .render(&doc, allow_missing)
        .map_err(|message| crate::Error::JsonPath {
            template: template.source().to_string(),
            message: message.to_string(),
        })
}
