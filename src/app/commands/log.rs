//! `clinv log`: what was deployed, when, and what changed — from the snapshot store, or
//! from a GitOps repository's commits with `--repo`.

use super::StoreOnly;
use crate::app::Result;
use crate::app::cli::{LogArgs, LogFormat};
use crate::app::output::stdout_error;
use crate::app::settings::Settings;
use crate::error::exit;
use crate::ops::history::{self, Log, Query};
use crate::view::report;

pub fn run(settings: &Settings, args: &LogArgs) -> Result<i32> {
    if let Some(n) = &args.n {
        return Err(crate::app::Failure::Usage(format!(
            "clinv log: -n is not an option here (git's -n is --max-count {n}; kubectl's -n namespace is --domain {n})"
        )));
    }
    let format = args.output.unwrap_or_default();
    let query = Query {
        since: args.since.as_deref(),
        until: args.until.as_deref(),
        max_count: args.max_count,
        addon: args.addon.as_deref(),
        reverse: args.reverse,
        now: jiff::Timestamp::now(),
    };
    if let Some(url) = &args.oci {
        return registry(settings, args, url, &query);
    }
    let opened = StoreOnly::open(settings)?;
    if let Some(domains) = opened.fleet(args.domain.many())? {
        return fleet(settings, &opened.store, &domains, args, &query);
    }
    let domain = opened.domain(settings, args.domain.one())?;
    if format == LogFormat::Text
        && args.repo.is_none()
        && args.addon.is_none()
        && !args.reverse
        && !args.oneline
    {
        return streamed(settings, &opened.store.domain(&domain), &domain, &query);
    }
    if format == LogFormat::Json && args.repo.is_none() && args.addon.is_none() && !args.reverse {
        return streamed_json(
            settings,
            &opened.store.domain(&domain),
            &domain,
            &query,
            false,
        );
    }
    let history = super::history(
        settings,
        &opened.store,
        &domain,
        args.repo.as_deref(),
        args.branch.as_deref(),
    )?;
    print(settings, args, &query, &history.points, &domain)
}

/// `log --oci`: the history of the artifacts in a registry, signatures checked first
/// with `--verify`; no store or project needed.
#[cfg(feature = "gitops")]
fn registry(settings: &Settings, args: &LogArgs, url: &str, query: &Query<'_>) -> Result<i32> {
    let reference = crate::oci::parse(url)?;
    let (access, key) = super::registry_reading(&args.registry, args.verify.as_deref())?;
    let source = history::Source::Oci {
        reference: &reference,
        access: &access,
        verify: key.as_ref(),
    };
    let history = history::load(source)?;
    for skipped in &history.skipped {
        settings.printer.warn(&format!("{skipped} — skipped"));
    }
    print(settings, args, query, &history.points, &reference.url())
}

#[cfg(not(feature = "gitops"))]
fn registry(_: &Settings, _: &LogArgs, _: &str, _: &Query<'_>) -> Result<i32> {
    Err(crate::Error::NoGitops("--oci").into())
}

/// The log of one history (`what` names it in messages).
fn print(
    settings: &Settings,
    args: &LogArgs,
    query: &Query<'_>,
    points: &[history::Point],
    what: &str,
) -> Result<i32> {
    let format = args.output.unwrap_or_default();
    let text = match history::log(points, query)? {
        Log::Never { suggestion } => {
            let name = args.addon.as_deref().unwrap_or_default();
            return never(settings, format, what, name, suggestion.as_deref());
        }
        Log::Addon(spans) => match format {
            LogFormat::Json => crate::inventory::render::to_json(&spans)?,
            _ => report::text::spans(args.addon.as_deref().unwrap_or_default(), &spans),
        },
        Log::Trail(trail) if trail.entries.is_empty() && windowed(query) => {
            if format == LogFormat::Json {
                settings.printer.data("[]\n")?;
            }
            empty_window(settings, what, query);
            return Ok(exit::OK);
        }
        Log::Trail(trail) => match format {
            LogFormat::Json => report::json::trail(&trail)?,
            LogFormat::Markdown => report::markdown::trail(&trail),
            _ if args.oneline => report::text::trail_oneline_aged(
                &trail,
                settings.printer.color_stdout(),
                aged(settings, query.now),
            ),
            _ => report::text::trail_aged(
                &trail,
                settings.printer.color_stdout(),
                aged(settings, query.now),
            ),
        },
    };
    settings.printer.data(&text)?;
    Ok(exit::OK)
}

/// `log -A`: every domain's entries merged newest first, each naming its domain.
fn fleet(
    settings: &Settings,
    store: &crate::store::Store,
    domains: &[crate::domain::Domain],
    args: &LogArgs,
    query: &Query<'_>,
) -> Result<i32> {
    if args.repo.is_some() || args.addon.is_some() {
        return Err(crate::app::Failure::Usage(
            "clinv log: --repo and --addon read one domain's history; they take no -A, glob or second --domain".to_string(),
        ));
    }
    let format = args.output.unwrap_or_default();
    if format == LogFormat::Markdown {
        return Err(crate::app::Failure::Usage(
            "clinv log -A: -o markdown is one domain's trail; use text, --oneline or -o json"
                .to_string(),
        ));
    }
    let (entries, skipped) = history::fleet_log(store, domains, query)?;
    for s in &skipped {
        settings.printer.warn(&format!("{s} — skipped"));
    }
    let (color, now) = (settings.printer.color_stdout(), aged(settings, query.now));
    let text = match format {
        LogFormat::Json => crate::inventory::render::to_json(&entries)?,
        _ if entries.is_empty() => String::new(),
        _ if args.oneline => report::text::fleet_oneline(
            entries.iter().map(|f| (f.domain.as_str(), &f.entry)),
            color,
            now,
        ),
        _ => {
            let mut out = String::new();
            for (i, f) in entries.iter().enumerate() {
                let mut block = String::new();
                report::text::entry_aged(&mut block, &f.entry, i == 0, color, now);
                // The domain leads the entry's first line.
                let rest = block.strip_prefix('\n').inspect(|_| out.push('\n'));
                out.push_str(&format!(
                    "{}  ",
                    crate::util::redact::escape_line(&f.domain)
                ));
                out.push_str(rest.unwrap_or(&block));
            }
            out
        }
    };
    settings.printer.data(&text)?;
    if entries.is_empty() {
        match windowed(query) {
            true => empty_window(settings, "any domain", query),
            false => settings.printer.info("no domain has a recorded step"),
        }
    }
    Ok(exit::OK)
}

/// `--addon NAME` never appears: said on stdout (`[]` in JSON, as the timeline it is not);
/// a close name that does appear is a `[warn]` with a did-you-mean, with `--strict` an
/// error.
fn never(
    settings: &Settings,
    format: LogFormat,
    domain: &str,
    name: &str,
    suggestion: Option<&str>,
) -> Result<i32> {
    settings.printer.data(&match format {
        LogFormat::Json => "[]\n".to_string(),
        _ => format!(
            "{} never appears in the history of {domain}\n",
            crate::util::redact::escape_line(name)
        ),
    })?;
    if let Some(near) = suggestion {
        let warning = crate::inventory::Warning {
            message: format!(
                "no addon '{}' in the history of {domain} — did you mean '{near}'?",
                crate::util::redact::escape_line(name)
            ),
            detail: None,
        };
        super::report_warnings(settings, &[warning])?;
    }
    Ok(exit::OK)
}

/// The plain log from the store, streamed: a history of a million records is never held
/// as entries or text.
fn streamed(
    settings: &Settings,
    store: &crate::store::DomainStore,
    domain: &str,
    query: &Query<'_>,
) -> Result<i32> {
    let steps = history::load_store(store, history::window(query))?;
    for skipped in &steps.skipped {
        settings.printer.warn(&format!("{skipped} — skipped"));
    }
    let color = settings.printer.color_stdout();
    let aged = aged(settings, query.now);
    let (mut text, mut first, mut empty) = (String::new(), true, false);
    settings.printer.data_with(|out| {
        let n = steps.entries(query, |entry| {
            text.clear();
            report::text::entry_aged(&mut text, entry, first, color, aged);
            first = false;
            out.write_all(text.as_bytes()).map_err(stdout_error)
        })?;
        if n == 0 && !windowed(query) {
            out.write_all(report::text::NO_HISTORY.as_bytes())
                .map_err(stdout_error)?;
        }
        empty = n == 0;
        Ok(())
    })?;
    if empty && windowed(query) {
        empty_window(settings, domain, query);
    }
    Ok(exit::OK)
}

/// `log -o json` from the store, streamed: the bytes of the whole trail document
/// ([`report::json::trail`]), an entry at a time; the timeline is built over every step
/// first, in the memory of its lanes. An empty window is `[]`, as [`print`] says it.
/// `report -o json` (`need_history`) refuses a history without a step, as it always has.
pub(super) fn streamed_json(
    settings: &Settings,
    store: &crate::store::DomainStore,
    domain: &str,
    query: &Query<'_>,
    need_history: bool,
) -> Result<i32> {
    // The timeline spans the whole history, whatever the window of the entries.
    let steps = history::load_store(store, history::Window::All)?;
    for skipped in &steps.skipped {
        settings.printer.warn(&format!("{skipped} — skipped"));
    }
    if need_history && steps.is_empty() {
        return Err(crate::error::Error::NoHistory(domain.to_string()).into());
    }
    let (label, timeline) = steps.timeline();
    let head = report::json::trail_head(label.as_deref())?;
    let mut empty = false;
    settings.printer.data_with(|out| {
        let mut first = true;
        let n = steps.entries(query, |entry| {
            if first {
                out.write_all(head.as_bytes()).map_err(stdout_error)?;
            }
            let text = report::json::trail_entry(entry, first)?;
            first = false;
            out.write_all(text.as_bytes()).map_err(stdout_error)
        })?;
        empty = n == 0;
        let text = match (empty, windowed(query)) {
            (true, true) => "[]\n".to_string(),
            (true, false) => head.clone() + &report::json::trail_end(&timeline, true)?,
            (false, _) => report::json::trail_end(&timeline, false)?,
        };
        out.write_all(text.as_bytes()).map_err(stdout_error)
    })?;
    if empty && windowed(query) {
        empty_window(settings, domain, query);
    }
    Ok(exit::OK)
}

/// Whether `--since`/`--until` narrowed the log to a window.
fn windowed(query: &Query<'_>) -> bool {
    query.since.is_some() || query.until.is_some()
}

/// An empty window prints no data (exit 0), and says so: a quiet no-op is not silent.
fn empty_window(settings: &Settings, domain: &str, query: &Query<'_>) {
    let bound =
        |word: &str, at: Option<&str>| at.map(|a| format!(" {word} {a}")).unwrap_or_default();
    settings.printer.info(&format!(
        "no recorded step of {domain}{}{}",
        bound("since", query.since),
        bound("until", query.until)
    ));
}

/// On a terminal, times are followed by their age (`(2d5h ago)`); never in a pipe.
fn aged(settings: &Settings, now: jiff::Timestamp) -> Option<jiff::Timestamp> {
    settings.printer.stdout_terminal().then_some(now)
}
