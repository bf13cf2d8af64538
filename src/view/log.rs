//! `clinv log`: what was deployed, when, and what changed.
//!
//! One history's log in every form, one domain's streamed from its store (a history of a million records is never
//! held as points, entries or text), several domains' merged newest first.

use crate::console::Console;
use crate::domain::Domain;
use crate::error::{Error, Result, exit};
use crate::ops::history::{self, Log, Query, say_skipped};
use crate::store::{DomainStore, Store};
use crate::view::format::LogFormat;
use crate::view::report;

/// How a log is shown: `-o`, `--oneline`, and `--strict` (a near `--addon` name is then
/// an error).
#[derive(Clone, Copy)]
pub struct Style {
    pub format: LogFormat,
    pub oneline: bool,
    pub strict: bool,
}

/// A log said through `console` for `query`, in `style`.
#[derive(Clone, Copy)]
pub struct Say<'a> {
    pub console: &'a dyn Console,
    pub style: Style,
    pub query: &'a Query<'a>,
}

impl Say<'_> {
    /// The log of one history's points (`what` names it in messages).
    ///
    /// # Errors
    /// A bad `--since`/`--until`; `--strict` and a near `--addon` name; stdout.
    pub fn points(&self, points: &[history::Point], what: &str) -> Result<i32> {
        let (console, query, format) = (self.console, self.query, self.style.format);
        let text = match history::log(points, query)? {
            Log::Never { suggestion } => return self.never(what, suggestion.as_deref()),
            Log::Addon(spans) => match format {
                LogFormat::Json => crate::inventory::render::to_json(&spans)?,
                _ => report::text::spans(query.addon.unwrap_or_default(), &spans),
            },
            Log::Trail(trail) if trail.entries.is_empty() && query.windowed() => {
                if format == LogFormat::Json {
                    console.data("[]\n")?;
                }
                self.empty_window(what);
                return Ok(exit::OK);
            }
            Log::Trail(trail) => match format {
                LogFormat::Json => report::json::trail(&trail)?,
                LogFormat::Markdown => report::markdown::trail(&trail),
                _ if self.style.oneline => {
                    report::text::trail_oneline_aged(&trail, console.color_stdout(), self.aged())
                }
                _ => report::text::trail_aged(&trail, console.color_stdout(), self.aged()),
            },
        };
        console.data(&text)?;
        Ok(exit::OK)
    }

    /// `log --oci`: the history of the artifacts in a registry, signatures checked
    /// first with `key`.
    ///
    /// # Errors
    /// As [`crate::ops::history::load`]; as [`Say::points`].
    #[cfg(feature = "gitops")]
    pub fn registry(
        &self,
        reference: &crate::oci::Reference,
        access: &crate::oci::Access,
        key: Option<&crate::oci::PublicKey>,
    ) -> Result<i32> {
        let source = history::Source::Oci {
            reference,
            access,
            verify: key,
        };
        let history = history::load(source)?;
        say_skipped(self.console, &history.skipped);
        self.points(&history.points, &reference.url())
    }

    /// `log -A`: every domain's entries merged newest first, each naming its domain.
    ///
    /// # Errors
    /// The store cannot be read; as [`Say::points`].
    pub fn fleet(&self, store: &Store, domains: &[Domain]) -> Result<i32> {
        let (console, query) = (self.console, self.query);
        if query.addon.is_some() {
            return self.fleet_addon(store, domains);
        }
        let log = history::FleetLog::load(store, domains, query)?;
        say_skipped(console, &log.skipped);
        let n = match self.style.format {
            LogFormat::Json => {
                let mut n = 0;
                crate::view::seq::write(console, crate::view::seq::SeqFormat::Json, |seq| {
                    n =
                        log.each(|domain, entry| seq.item(&history::FleetItem { domain, entry }))?;
                    Ok(())
                })?;
                n
            }
            _ => self.fleet_text(&log)?,
        };
        if n == 0 {
            match query.windowed() {
                true => self.empty_window("any domain"),
                false => console.info("no domain has a recorded step"),
            }
        }
        Ok(exit::OK)
    }

    /// `log -A --addon NAME`: every selected domain's steps that change the addon, merged
    /// ([`crate::ops::fleet::addon_log`]); a name no step holds is said as one domain's is.
    fn fleet_addon(&self, store: &Store, domains: &[Domain]) -> Result<i32> {
        let (console, query) = (self.console, self.query);
        let log = crate::ops::fleet::addon_log::load(store, domains, query)?;
        say_skipped(console, &log.skipped);
        let name = query.addon.unwrap_or_default();
        if !log.seen {
            return self.never("the selected domains", log.suggestion.as_deref());
        }
        console.data(&match self.style.format {
            LogFormat::Json => crate::inventory::render::to_json(&log.events)?,
            _ => {
                crate::view::fleet_addon_log::text(&log.events, console.color_stdout(), self.aged())
            }
        })?;
        if log.events.is_empty() {
            let bound = |word: &str, at: Option<&str>| at.map(|a| format!(" {word} {a}"));
            console.info(&format!(
                "no step of any selected domain changes {}{}{}",
                crate::util::redact::escape_line(name),
                bound("since", query.since).unwrap_or_default(),
                bound("until", query.until).unwrap_or_default()
            ));
        }
        Ok(exit::OK)
    }

    /// `log -A` as text ([`report::stream::write_fleet_text`]).
    fn fleet_text(&self, log: &history::FleetLog<'_>) -> Result<usize> {
        let (color, now) = (self.console.color_stdout(), self.aged());
        if self.style.oneline {
            // One line per event: a change several domains made within a day is one line.
            let (text, steps) = report::fleet::log_oneline(log, log.oldest_first(), color)?;
            self.console.data(&text)?;
            return Ok(steps);
        }
        let mut n = 0;
        self.console.data_with(|out| {
            n = report::stream::write_fleet_text(log, None, (color, now), out, &Error::stdout)?;
            Ok(())
        })?;
        Ok(n)
    }

    /// `--addon NAME` never appears: said on stdout (`[]` in JSON, as the timeline it is
    /// not); a close name that does appear is a `[warn]` with a did-you-mean, with
    /// `--strict` an error.
    fn never(&self, domain: &str, suggestion: Option<&str>) -> Result<i32> {
        let name = crate::util::redact::escape_line(self.query.addon.unwrap_or_default());
        self.console.data(&match self.style.format {
            LogFormat::Json => "[]\n".to_string(),
            _ => format!("{name} never appears in the history of {domain}\n"),
        })?;
        if let Some(near) = suggestion {
            let warning = crate::inventory::Warning {
                message: format!(
                    "no addon '{name}' in the history of {domain} — did you mean '{near}'?"
                ),
                detail: None,
            };
            crate::ops::warnings::say(self.console, self.style.strict, &[warning])?;
        }
        Ok(exit::OK)
    }

    /// An empty window prints no data (exit 0), and says so: a quiet no-op is not silent.
    fn empty_window(&self, domain: &str) {
        let query = self.query;
        let bound =
            |word: &str, at: Option<&str>| at.map(|a| format!(" {word} {a}")).unwrap_or_default();
        self.console.info(&format!(
            "no recorded step of {domain}{}{}",
            bound("since", query.since),
            bound("until", query.until)
        ));
    }

    /// On a terminal, times are followed by their age (`(2d5h ago)`); never in a pipe.
    fn aged(&self) -> Option<jiff::Timestamp> {
        self.console.stdout_terminal().then_some(self.query.now)
    }
}

impl<'a> Say<'a> {
    /// The log of one domain from its store, in any form, streamed; what the Git and
    /// registry channels still owe said first (one directory read), on stderr: the
    /// trail itself is the journal's.
    ///
    /// # Errors
    /// The store cannot be read; as [`Say::points`].
    pub fn store(&self, store: &'a DomainStore) -> Result<i32> {
        let owed = store.owed();
        for e in &owed.owed {
            let o = &e.owed;
            self.console.info(&format!(
                "snapshot {}: {} push owed to {} since {} ({})",
                o.snapshot,
                o.push.channel(),
                o.push.shown_target(),
                o.at,
                o.reason
            ));
        }
        for d in &owed.damaged {
            self.console.warn(&format!("outbox: {d}"));
        }
        let log = StoreLog { say: *self, store };
        match self.style.format {
            _ if self.query.addon.is_some() => log.addon(),
            LogFormat::Json => log.json(false),
            LogFormat::Markdown => log.markdown(),
            LogFormat::Text => log.text(),
        }
    }

    /// `log -o json` from the store (`report -o json` with `need_history`: it refuses a
    /// history without a step, as it always has); see [`StoreLog::json`].
    ///
    /// # Errors
    /// The store cannot be read; no step with `need_history`; stdout.
    pub fn store_json(&self, store: &'a DomainStore, need_history: bool) -> Result<i32> {
        StoreLog { say: *self, store }.json(need_history)
    }
}

/// One domain's log from its store, for a query.
struct StoreLog<'a> {
    say: Say<'a>,
    store: &'a DomainStore,
}

impl StoreLog<'_> {
    /// `--addon NAME`: the addon's spans over every step.
    fn addon(&self) -> Result<i32> {
        let name = self.say.query.addon.unwrap_or_default();
        let steps = self.load(history::Window::All)?;
        // Bad --since/--until are refused as the other forms refuse them.
        steps.count(self.say.query)?;
        let text = match steps.addon(name) {
            Log::Never { suggestion } => {
                return self.say.never(&self.store.domain, suggestion.as_deref());
            }
            Log::Addon(spans) if self.say.style.format == LogFormat::Json => {
                crate::inventory::render::to_json(&spans)?
            }
            Log::Addon(spans) => report::text::spans(name, &spans),
            Log::Trail(_) => unreachable!("an addon's log is spans"),
        };
        self.say.console.data(&text)?;
        Ok(exit::OK)
    }

    /// `-o markdown`: the head (it counts the entries first, without comparing), then a
    /// row per entry as it is made.
    fn markdown(&self) -> Result<i32> {
        let query = self.say.query;
        let steps = self.load(history::Window::All)?;
        let n = steps.count(query)?;
        if n == 0 && query.windowed() {
            return Ok(self.empty_window());
        }
        self.say.console.data_with(|out| {
            report::stream::write_markdown(&steps, query, n, out, &Error::stdout)
        })?;
        Ok(exit::OK)
    }

    /// The plain log. `--oneline` aligns its columns: the entries are made twice —
    /// measured, then written.
    fn text(&self) -> Result<i32> {
        let (console, query) = (self.say.console, self.say.query);
        let steps = self.load(history::window(query))?;
        let style = (console.color_stdout(), self.say.aged());
        let lines = (self.say.style.oneline).then(|| report::text::Oneline::new(style.0, style.1));
        let mut n = 0;
        console.data_with(|out| {
            n = report::stream::write_text(&steps, query, lines, style, out, &Error::stdout)?;
            Ok(())
        })?;
        match n == 0 && query.windowed() {
            true => Ok(self.empty_window()),
            false => Ok(exit::OK),
        }
    }

    /// `-o json`: the bytes of the whole trail document ([`report::json::trail`]), an
    /// entry at a time; the timeline is built over every step first, in the memory of
    /// its lanes. An empty window is `[]`, as [`Say::points`] says it.
    fn json(&self, need_history: bool) -> Result<i32> {
        let steps = json_steps(self.say.console, self.store, need_history)?;
        let mut n = 0;
        self.say.console.data_with(|out| {
            n = report::stream::write_json(&steps, self.say.query, out, &Error::stdout)?;
            Ok(())
        })?;
        match n == 0 && self.say.query.windowed() {
            true => Ok(self.empty_window()),
            false => Ok(exit::OK),
        }
    }

    /// The steps of `window`, the skipped records said.
    fn load(&self, window: history::Window) -> Result<history::StoreSteps> {
        load(self.say.console, self.store, window)
    }

    /// An empty window: said, no data (exit 0).
    fn empty_window(&self) -> i32 {
        self.say.empty_window(&self.store.domain);
        exit::OK
    }
}

/// The steps of `window`, the skipped records said.
fn load(
    console: &dyn Console,
    store: &DomainStore,
    window: history::Window,
) -> Result<history::StoreSteps> {
    let steps = history::load_store(store, window)?;
    say_skipped(console, &steps.skipped);
    Ok(steps)
}

/// Every step of the store for the JSON trail (the timeline spans the whole history,
/// whatever the window of the entries); none is an error with `need_history`.
fn json_steps(
    console: &dyn Console,
    store: &DomainStore,
    need_history: bool,
) -> Result<history::StoreSteps> {
    let steps = load(console, store, history::Window::All)?;
    if need_history && steps.is_empty() {
        return Err(Error::NoHistory(store.domain.to_string()));
    }
    Ok(steps)
}

/// `report -o json --out FILE`: the document of [`Say::store_json`] written into FILE as
/// it is made, which appears whole (atomically, durably) or not at all.
///
/// # Errors
/// The store cannot be read; no step; FILE cannot be written.
pub fn json_to_file(
    console: &dyn Console,
    store: &DomainStore,
    file: &std::path::Path,
) -> Result<i32> {
    let query = Query::everything(jiff::Timestamp::now());
    let steps = json_steps(console, store, true)?;
    let io = |e| Error::io(file, e);
    let (staged, written) = crate::util::files::stage_file(file, 0o644).map_err(io)?;
    let mut out = std::io::BufWriter::with_capacity(256 << 10, written);
    let n = report::stream::write_json(&steps, &query, &mut out, &|e| io(e))?;
    let written = out.into_inner().map_err(|e| io(e.into_error()))?;
    staged.commit_file(written).map_err(io)?;
    let s = if n == 1 { "" } else { "s" };
    console.info(&format!("wrote {} ({n} step{s})", file.display()));
    Ok(exit::OK)
}
