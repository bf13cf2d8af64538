//! `clinv updates`: which addons have a newer version in the addon index.

use super::{
    deploy_domain_note, domain, fetch_options, print_notices, project, report_warnings, scope,
};
use crate::app::Result;
use crate::app::cli::{TableFormat, UpdatesArgs};
use crate::app::output;
use crate::app::settings::Settings;
use crate::catalog::fetch::{self, IndexRef};
use crate::catalog::updates;
use crate::error::exit;
use crate::ops::updates::{self as ops, Compared, Domain};
use crate::view;

pub fn run(settings: &Settings, args: &UpdatesArgs) -> Result<i32> {
    let index_ref = IndexRef::parse(&args.index)?;
    let loaded = fetch::load(&index_ref, &fetch_options(settings, &args.source))?;
    for w in &loaded.warnings {
        settings.printer.warn(w);
    }
    settings.printer.debug(&format!(
        "index {} ({:?}, {} addons)",
        index_ref.display(),
        loaded.origin,
        loaded.index.addons.len()
    ));
    let Some((compared, not_read)) = compared(settings, args)? else {
        return Ok(exit::OK);
    };
    for name in updates::duplicates(&loaded.index) {
        settings.printer.warn(&format!(
            "addon index {}: '{name}' appears more than once; the first entry is compared",
            index_ref.display()
        ));
    }
    let list = updates::compute_with(&compared.addons, &loaded.index, args.pre);
    settings.printer.detail(&format!(
        "compared the {} with {}{}",
        compared.source.describe(),
        index_ref.display(),
        match loaded.index.generated_at.as_str() {
            "" => String::new(),
            at => format!(" (generated {at})"),
        }
    ));
    let not_read_text = not_read.as_ref().map(|(r, d)| format!("{r}: {d}"));
    let answer = Answer {
        compared: &compared,
        not_read: not_read_text.as_deref(),
        generated_at: &loaded.index.generated_at,
        list: &list,
    };
    settings.printer.data(&format(args, &answer)?)?;
    // Not the live cluster's answer: 16, or with --strict why the cluster was not read.
    Ok(match not_read {
        Some((reason, _)) if settings.strict => crate::error::exit::for_reason(reason),
        Some(_) => exit::NOT_LIVE,
        None => exit::OK,
    })
}

/// The addons compared and why the cluster was not read (when it was not); `None` for a
/// deploy domain (said on stderr, exit 0).
fn compared(settings: &Settings, args: &UpdatesArgs) -> Result<Option<(Compared, NotRead)>> {
    let Some(path) = &args.from else {
        let project = project(settings)?;
        let domain = domain(settings, &project, args.domain.domain.as_deref())?;
        let chosen = ops::choose(
            &Domain {
                scope: scope(settings, &project, &domain, &args.limits),
                source_date_epoch: settings.env.source_date_epoch.as_deref(),
            },
            args.source.offline,
        )?;
        print_notices(settings, &chosen.notices);
        report_warnings(settings, &chosen.warnings)?;
        return Ok(match (chosen.compared, chosen.deploy) {
            (Some(c), _) => Some((c, chosen.not_read)),
            (None, cluster_ref) => {
                deploy_domain_note(settings, &domain, cluster_ref.flatten().as_deref());
                None
            }
        });
    };
    Ok(Some((ops::from_file(path)?, None)))
}

type NotRead = Option<(crate::delivery::Reason, String)>;

/// What `updates` prints, in any format.
struct Answer<'a> {
    compared: &'a Compared,
    not_read: Option<&'a str>,
    generated_at: &'a str,
    list: &'a [updates::Update],
}

/// The answer in the asked format; a table says first when the cluster was not read.
fn format(args: &UpdatesArgs, a: &Answer<'_>) -> Result<String> {
    let word = a.compared.source.word();
    let json = || view::updates::updates_json(word, a.not_read, a.generated_at, a.list);
    Ok(match args.table.output.clone().unwrap_or_default() {
        TableFormat::Json => json()?,
        TableFormat::Yaml => output::yaml(&json()?)?,
        TableFormat::JsonPath(template) => {
            output::jsonpath(&template, &json()?, args.table.allow_missing_template_keys)?
        }
        TableFormat::Name => view::names(a.list.iter().map(|u| u.name.as_str())),
        format => {
            let style = view::TableStyle {
                wide: format == TableFormat::Wide,
                no_headers: args.table.no_headers,
            };
            let table = view::updates::updates_table(a.list, word, style);
            match (a.not_read, args.table.no_headers) {
                (Some(why), false) => format!(
                    "the live cluster was not read ({}): the versions are the {}\n{table}",
                    crate::util::redact::escape_line(why),
                    a.compared.source.describe()
                ),
                _ => table,
            }
        }
    })
}
