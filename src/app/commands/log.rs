//! `clinv log`: what was deployed, when, and what changed — from the snapshot store, or
//! from a GitOps repository's commits with `--repo`.

use crate::app::Result;
use crate::app::cli::{LogArgs, LogFormat};
use crate::app::settings::Settings;
use crate::error::exit;
use crate::ops::history::{self, Log, Query};
use crate::store::DomainStore;
use crate::view::report;

pub fn run(settings: &Settings, args: &LogArgs) -> Result<i32> {
    if let Some(n) = &args.n {
        return Err(crate::app::Failure::Usage(format!(
            "clinv log: -n is not an option here (git's -n is --max-count {n}; kubectl's -n namespace is --domain {n})"
        )));
    }
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
    let opened = super::reach(settings)?;
    if let Some(domains) = opened.fleet(args.domain.many())? {
        return fleet(settings, &opened.store, &domains, args, &query);
    }
    let domain = opened.domain(&settings.printer, args.domain.one(), settings.env.domain_name.as_deref())?;
    if args.repo.is_none() {
        return from_store(settings, &opened.store.domain(&domain), args, &query);
    }
    let history = crate::ops::history::load_said(
        &settings.printer,
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
        Log::Trail(trail) if trail.entries.is_empty() && query.windowed() => {
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
    if args.repo.is_some() {
        return Err(crate::app::Failure::Usage(
            "clinv log: --repo reads one domain's history; it takes no -A, glob or second --domain"
                .to_string(),
        ));
    }
    let format = args.output.unwrap_or_default();
    if format == LogFormat::Markdown {
        return Err(crate::app::Failure::Usage(
            "clinv log -A: -o markdown is one domain's trail; use text, --oneline or -o json"
                .to_string(),
        ));
    }
    if args.addon.is_some() {
        return fleet_addon(settings, store, domains, format, query);
    }
    let log = history::FleetLog::load(store, domains, query)?;
    for s in &log.skipped {
        settings.printer.warn(&format!("{s} — skipped"));
    }
    let (color, now) = (settings.printer.color_stdout(), aged(settings, query.now));
    let n = match format {
        LogFormat::Json => {
            let mut n = 0;
            crate::view::seq::write(
                &settings.printer,
                crate::view::seq::SeqFormat::Json,
                |seq| {
                    n =
                        log.each(|domain, entry| seq.item(&history::FleetItem { domain, entry }))?;
                    Ok(())
                },
            )?;
            n
        }
        _ => fleet_text(settings, &log, args.oneline, color, now)?,
    };
    if n == 0 {
        match query.windowed() {
            true => empty_window(settings, "any domain", query),
            false => settings.printer.info("no domain has a recorded step"),
        }
    }
    Ok(exit::OK)
}

/// `log -A --addon NAME`: every selected domain's steps that change the addon, merged
/// ([`crate::ops::fleet::addon_log`]); a name no step holds is said as one domain's is.
fn fleet_addon(
    settings: &Settings,
    store: &crate::store::Store,
    domains: &[crate::domain::Domain],
    format: LogFormat,
    query: &Query<'_>,
) -> Result<i32> {
    let log = crate::ops::fleet::addon_log::load(store, domains, query)?;
    for s in &log.skipped {
        settings.printer.warn(&format!("{s} — skipped"));
    }
    let name = query.addon.unwrap_or_default();
    if !log.seen {
        let what = "the selected domains";
        return never(settings, format, what, name, log.suggestion.as_deref());
    }
    settings.printer.data(&match format {
        LogFormat::Json => crate::inventory::render::to_json(&log.events)?,
        _ => crate::view::fleet_addon_log::text(
            &log.events,
            settings.printer.color_stdout(),
            aged(settings, query.now),
        ),
    })?;
    if log.events.is_empty() {
        let bound = |word: &str, at: Option<&str>| at.map(|a| format!(" {word} {a}"));
        settings.printer.info(&format!(
            "no step of any selected domain changes {}{}{}",
            crate::util::redact::escape_line(name),
            bound("since", query.since).unwrap_or_default(),
            bound("until", query.until).unwrap_or_default()
        ));
    }
    Ok(exit::OK)
}

/// `log -A` as text ([`report::stream::write_fleet_text`]).
fn fleet_text(
    settings: &Settings,
    log: &history::FleetLog<'_>,
    oneline: bool,
    color: bool,
    now: Option<jiff::Timestamp>,
) -> Result<usize> {
    if oneline {
        // One line per event: a change several domains made within a day is one line.
        let (text, steps) = report::fleet::log_oneline(log, log.oldest_first(), color)?;
        settings.printer.data(&text)?;
        return Ok(steps);
    }
    let lines = oneline.then(|| report::text::Oneline::new(color, now));
    let mut n = 0;
    settings.printer.data_with(|out| {
        n = report::stream::write_fleet_text(log, lines, (color, now), out, &crate::Error::stdout)?;
        Ok(())
    })?;
    Ok(n)
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

/// The log of one domain from its store, in any form, streamed: a history of a million
/// records is never held as points, entries or text.
fn from_store(
    settings: &Settings,
    store: &DomainStore,
    args: &LogArgs,
    query: &Query<'_>,
) -> Result<i32> {
    // What the Git and registry channels still owe (one directory read), on stderr:
    // the trail itself is the journal's.
    let owed = store.owed();
    for e in &owed.owed {
        let o = &e.owed;
        settings.printer.info(&format!(
            "snapshot {}: {} push owed to {} since {} ({})",
            o.snapshot,
            o.push.channel(),
            o.push.shown_target(),
            o.at,
            o.reason
        ));
    }
    for d in &owed.damaged {
        settings.printer.warn(&format!("outbox: {d}"));
    }
    let log = StoreLog {
        settings,
        store,
        query,
    };
    match args.output.unwrap_or_default() {
        format if args.addon.is_some() => log.addon(format),
        LogFormat::Json => log.json(false),
        LogFormat::Markdown => log.markdown(),
        _ => log.text(args.oneline),
    }
}

/// `log -o json` from the store (`report -o json` with `need_history`: it refuses a
/// history without a step, as it always has); see [`StoreLog::json`].
pub(super) fn streamed_json(
    settings: &Settings,
    store: &DomainStore,
    query: &Query<'_>,
    need_history: bool,
) -> Result<i32> {
    let log = StoreLog {
        settings,
        store,
        query,
    };
    log.json(need_history)
}

/// One domain's log from its store, for a query.
struct StoreLog<'a> {
    settings: &'a Settings,
    store: &'a DomainStore,
    query: &'a Query<'a>,
}

impl StoreLog<'_> {
    /// `--addon NAME`: the addon's spans over every step.
    fn addon(&self, format: LogFormat) -> Result<i32> {
        let name = self.query.addon.unwrap_or_default();
        let steps = self.load(history::Window::All)?;
        // Bad --since/--until are refused as the other forms refuse them.
        steps.count(self.query)?;
        let text = match steps.addon(name) {
            Log::Never { suggestion } => {
                let domain = &self.store.domain;
                return never(self.settings, format, domain, name, suggestion.as_deref());
            }
            Log::Addon(spans) if format == LogFormat::Json => {
                crate::inventory::render::to_json(&spans)?
            }
            Log::Addon(spans) => report::text::spans(name, &spans),
            Log::Trail(_) => unreachable!("an addon's log is spans"),
        };
        self.settings.printer.data(&text)?;
        Ok(exit::OK)
    }

    /// `-o markdown`: the head (it counts the entries first, without comparing), then a
    /// row per entry as it is made.
    fn markdown(&self) -> Result<i32> {
        let steps = self.load(history::Window::All)?;
        let n = steps.count(self.query)?;
        if n == 0 && self.query.windowed() {
            return Ok(self.empty_window());
        }
        self.settings.printer.data_with(|out| {
            report::stream::write_markdown(&steps, self.query, n, out, &crate::Error::stdout)
        })?;
        Ok(exit::OK)
    }

    /// The plain log. `--oneline` aligns its columns: the entries are made twice —
    /// measured, then written.
    fn text(&self, oneline: bool) -> Result<i32> {
        let (settings, query) = (self.settings, self.query);
        let steps = self.load(history::window(query))?;
        let style = (settings.printer.color_stdout(), aged(settings, query.now));
        let lines = oneline.then(|| report::text::Oneline::new(style.0, style.1));
        let mut n = 0;
        settings.printer.data_with(|out| {
            n = report::stream::write_text(
                &steps,
                query,
                lines,
                style,
                out,
                &crate::Error::stdout,
            )?;
            Ok(())
        })?;
        match n == 0 && query.windowed() {
            true => Ok(self.empty_window()),
            false => Ok(exit::OK),
        }
    }

    /// `-o json`: the bytes of the whole trail document ([`report::json::trail`]), an
    /// entry at a time; the timeline is built over every step first, in the memory of
    /// its lanes. An empty window is `[]`, as [`print`] says it.
    fn json(&self, need_history: bool) -> Result<i32> {
        let steps = self.json_steps(need_history)?;
        let mut n = 0;
        self.settings.printer.data_with(|out| {
            n = report::stream::write_json(&steps, self.query, out, &crate::Error::stdout)?;
            Ok(())
        })?;
        match n == 0 && self.query.windowed() {
            true => Ok(self.empty_window()),
            false => Ok(exit::OK),
        }
    }

    /// Every step of the store for the JSON trail (the timeline spans the whole
    /// history, whatever the window of the entries).
    fn json_steps(&self, need_history: bool) -> Result<history::StoreSteps> {
        let steps = self.load(history::Window::All)?;
        if need_history && steps.is_empty() {
            let domain = self.store.domain.to_string();
            return Err(crate::error::Error::NoHistory(domain).into());
        }
        Ok(steps)
    }

    /// The steps of `window`, the skipped records said.
    fn load(&self, window: history::Window) -> Result<history::StoreSteps> {
        let steps = history::load_store(self.store, window)?;
        for skipped in &steps.skipped {
            self.settings.printer.warn(&format!("{skipped} — skipped"));
        }
        Ok(steps)
    }

    /// An empty window: said, no data (exit 0).
    fn empty_window(&self) -> i32 {
        empty_window(self.settings, &self.store.domain, self.query);
        exit::OK
    }
}

/// `report -o json --out FILE`: the document of [`streamed_json`] written into FILE as
/// it is made, which appears whole (atomically, durably) or not at all.
pub(super) fn json_to_file(
    settings: &Settings,
    store: &DomainStore,
    file: &std::path::Path,
) -> Result<i32> {
    let query = Query::everything(jiff::Timestamp::now());
    let log = StoreLog {
        settings,
        store,
        query: &query,
    };
    let steps = log.json_steps(true)?;
    let io = |e| crate::error::Error::io(file, e);
    let (staged, written) = crate::util::files::stage_file(file, 0o644).map_err(io)?;
    let mut out = std::io::BufWriter::with_capacity(256 << 10, written);
    let n = report::stream::write_json(&steps, &query, &mut out, &|e| io(e))?;
    let written = out.into_inner().map_err(|e| io(e.into_error()))?;
    staged.commit_file(written).map_err(io)?;
    let s = if n == 1 { "" } else { "s" };
    settings
        .printer
        .info(&format!("wrote {} ({n} step{s})", file.display()));
    Ok(exit::OK)
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
