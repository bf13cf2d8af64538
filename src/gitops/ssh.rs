//! SSH remotes through the system `ssh`, as git runs them: libgit2's smart protocol over
//! the stdin and stdout of `ssh [-p PORT] [user@]host "git-upload-pack '/path'"` (or
//! `git-receive-pack`). The program is git's: `GIT_SSH_COMMAND`, then `core.sshCommand`
//! (both run by `sh` as git does), then `GIT_SSH`, then `ssh`; its options follow git's
//! `ssh.variant` / `GIT_SSH_VARIANT` (OpenSSH, plink, putty, tortoiseplink, simple). So
//! `~/.ssh/config` (`Host` aliases, `HostName`, `Port`, `User`, `IdentityFile`), key files,
//! the agent and known_hosts are OpenSSH's own business, exactly as for `git push`.
//!
//! Differences from git, on purpose: OpenSSH runs with `BatchMode=yes` (plink with
//! `-batch`), so nothing ever prompts (an encrypted key must be in the agent; a command
//! that names `-o BatchMode=no` itself wins, as ssh takes the first value it is given),
//! and a host-key failure says how to add the key instead of quoting ssh alone. Nothing
//! is ever accepted for the user: no `StrictHostKeyChecking=no`, no `accept-new`.
#![allow(clippy::disallowed_types)] // gitops: the one module that uses git2

use crate::util::redact;
use git2::transport::{Service, SmartSubtransport, SmartSubtransportStream, Transport};
use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The URL schemes git sends through ssh. libgit2 looks scp-like `host:path` URLs up as
/// `ssh://`, so registering these takes them too.
pub(super) const SCHEMES: [&str; 3] = ["ssh", "ssh+git", "git+ssh"];

/// How much of ssh's stderr is kept (the tail) for a failure message.
const STDERR_KEEP: usize = 16 * 1024;

/// The shell that runs `GIT_SSH_COMMAND` and `core.sshCommand`: git's `SHELL_PATH`.
const SHELL: &str = "/bin/sh";

/// How much a channel holds of what libgit2 writes before it goes to ssh (see
/// [`Channel::send`]).
const WRITE_HOLD: usize = 64 * 1024;

/// How long a finished connection may take to exit after its input is closed.
const EXIT_WAIT: Duration = Duration::from_secs(10);

/// Where an SSH URL points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Address {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
    /// As the remote command gets it: `/abs`, `rel` or `~user/rel`.
    pub path: String,
}

impl Address {
    /// `[user@]host` as ssh gets it.
    fn destination(&self) -> String {
        match &self.user {
            Some(u) => format!("{u}@{}", self.host),
            None => self.host.clone(),
        }
    }

    /// `host` or `host port N` for messages: no user (an `ssh://user:password@` URL
    /// would carry a password there).
    fn shown(&self) -> String {
        match self.port {
            Some(p) => format!("{} port {p}", self.host),
            None => self.host.clone(),
        }
    }
}

/// Why a remote is not an SSH address clinv can use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum AddressError {
    #[error("'{0}://' is not an SSH URL")]
    Scheme(String),
    #[error("no path after the host")]
    NoPathAfterHost,
    #[error("'[' without ']'")]
    Bracket,
    #[error("no ':' after ']'")]
    NoColonAfterBracket,
    #[error("no ':' between host and path")]
    NoColon,
    #[error("a local path, not an SSH remote")]
    LocalPath,
    #[error("no host")]
    NoHost,
    #[error("a host or user starting with '-' is refused (it would be an ssh option)")]
    Option,
    #[error("no path")]
    NoPath,
    #[error("control characters in the URL")]
    Control,
    #[error("'[' without ']' in the host")]
    HostBracket,
    #[error("junk after ']' in the host")]
    HostJunk,
    #[error("port '{0}' is not a number from 1 to 65535")]
    Port(String),
    #[error("a '%' not followed by two hex digits")]
    Percent,
    #[error("the URL decodes to invalid UTF-8")]
    Utf8,
}

/// Parses an SSH remote as git does: `ssh://[user@]host[:port]/path` (also `ssh+git://`,
/// `git+ssh://`; percent-decoded; `/~user/…` is home-relative), or scp-like
/// `[user@]host:path` and `[user@host:port]:path`.
///
/// # Errors
/// A text naming what is wrong: no host or path, a bad port, a host or user that starts
/// with `-` (it would be an ssh option), control characters.
pub(crate) fn parse(url: &str) -> Result<Address, AddressError> {
    let (user, hostport, path, url_form) = if let Some((scheme, rest)) = url.split_once("://") {
        if !SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme)) {
            return Err(AddressError::Scheme(scheme.to_string()));
        }
        let rest = percent_decode(rest)?;
        let Some(slash) = rest.find('/') else {
            return Err(AddressError::NoPathAfterHost);
        };
        let (authority, path) = rest.split_at(slash);
        let path = match path.strip_prefix("/~") {
            Some(_) => path[1..].to_string(),
            None => path.to_string(),
        };
        let (user, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u.to_string()), h.to_string()),
            None => (None, authority.to_string()),
        };
        (user, hostport, path, true)
    } else {
        let (host, path) = match url.strip_prefix('[') {
            Some(inner) => {
                let close = inner.find(']').ok_or(AddressError::Bracket)?;
                let path = inner[close + 1..]
                    .strip_prefix(':')
                    .ok_or(AddressError::NoColonAfterBracket)?;
                (&inner[..close], path)
            }
            None => url.split_once(':').ok_or(AddressError::NoColon)?,
        };
        if host.contains('/') {
            return Err(AddressError::LocalPath);
        }
        let (user, hostport) = match host.rsplit_once('@') {
            Some((u, h)) => (Some(u.to_string()), h.to_string()),
            None => (None, host.to_string()),
        };
        (user, hostport, path.to_string(), false)
    };
    let (host, port) = host_and_port(&hostport, url_form)?;
    if host.is_empty() {
        return Err(AddressError::NoHost);
    }
    if host.starts_with('-') || user.as_deref().is_some_and(|u| u.starts_with('-')) {
        return Err(AddressError::Option);
    }
    if path.is_empty() {
        return Err(AddressError::NoPath);
    }
    let all = [Some(&host), user.as_ref(), Some(&path)];
    if all
        .iter()
        .flatten()
        .any(|s| s.chars().any(char::is_control))
    {
        return Err(AddressError::Control);
    }
    Ok(Address {
        user: user.filter(|u| !u.is_empty()),
        host,
        port,
        path,
    })
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`; a bare IPv6 address (several colons, scp
/// form) is a host without a port.
fn host_and_port(text: &str, url_form: bool) -> Result<(String, Option<u16>), AddressError> {
    let (host, port) = if let Some(inner) = text.strip_prefix('[') {
        let close = inner.find(']').ok_or(AddressError::HostBracket)?;
        let after = &inner[close + 1..];
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or(AddressError::HostJunk)?),
        };
        (&inner[..close], port)
    } else if text.matches(':').count() == 1 || (url_form && text.contains(':')) {
        let (h, p) = text.rsplit_once(':').unwrap_or((text, ""));
        (h, Some(p))
    } else {
        (text, None)
    };
    let port = match port {
        None | Some("") => None,
        Some(p) => Some(
            p.parse::<u16>()
                .ok()
                .filter(|n| *n > 0 && p.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| AddressError::Port(p.to_string()))?,
        ),
    };
    Ok((host.to_string(), port))
}

/// The one strict decoder ([`crate::util::url::percent_decode`]), in this parser's errors.
fn percent_decode(text: &str) -> Result<String, AddressError> {
    use crate::util::url::{self, UrlError};
    url::percent_decode(text).map_err(|e| match e {
        UrlError::NotUtf8 => AddressError::Utf8,
        _ => AddressError::Percent,
    })
}

/// `'text'` for a POSIX shell, as git's `sq_quote_buf` writes it (`'` and `!` closed
/// out and escaped), so the remote shell passes the path through unchanged.
fn sq_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for c in text.chars() {
        if matches!(c, '\'' | '!') {
            out.push_str("'\\");
            out.push(c);
            out.push('\'');
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// The option dialect of the ssh program (git's `ssh.variant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Variant {
    /// Unknown: probed with `-G` as git does (OpenSSH if that succeeds, else simple).
    Auto,
    /// No options at all (a port is an error).
    Simple,
    OpenSsh,
    Plink,
    TortoisePlink,
}

impl Variant {
    fn named(name: &str) -> Variant {
        match name.to_ascii_lowercase().as_str() {
            "auto" => Variant::Auto,
            "simple" => Variant::Simple,
            "plink" | "putty" => Variant::Plink,
            "tortoiseplink" => Variant::TortoisePlink,
            _ => Variant::OpenSsh,
        }
    }

    /// From the program's file name, as git's `determine_ssh_variant`.
    fn of_program(first_word: &str) -> Variant {
        let base = first_word.rsplit(['/', '\\']).next().unwrap_or(first_word);
        let base = base.to_ascii_lowercase();
        match base.strip_suffix(".exe").unwrap_or(&base) {
            "ssh" => Variant::OpenSsh,
            "plink" => Variant::Plink,
            "tortoiseplink" => Variant::TortoisePlink,
            _ => Variant::Auto,
        }
    }

    /// The options before the destination.
    fn options(self, port: Option<u16>) -> io::Result<Vec<String>> {
        let mut args: Vec<String> = match self {
            Variant::OpenSsh => vec!["-o".into(), "BatchMode=yes".into()],
            Variant::Plink | Variant::TortoisePlink => vec!["-batch".into()],
            Variant::Simple | Variant::Auto => Vec::new(),
        };
        if let Some(p) = port {
            match self {
                Variant::OpenSsh | Variant::Auto => args.push("-p".into()),
                Variant::Plink | Variant::TortoisePlink => args.push("-P".into()),
                Variant::Simple => {
                    return Err(io::Error::other(format!(
                        "ssh variant 'simple' does not support setting port {p} (set ssh.variant)"
                    )));
                }
            }
            args.push(p.to_string());
        }
        Ok(args)
    }
}

/// The ssh program and how to run it, resolved as git resolves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Program {
    command: String,
    /// Run by `sh -c` (`GIT_SSH_COMMAND`, `core.sshCommand`) or executed directly.
    shell: bool,
    variant: Variant,
    /// Where the command came from, for messages.
    source: &'static str,
}

impl Program {
    /// `GIT_SSH_COMMAND`, `core.sshCommand`, `GIT_SSH`, `ssh`; the variant from
    /// `GIT_SSH_VARIANT`, `ssh.variant`, else the program's name.
    pub(crate) fn resolve(
        env: impl Fn(&str) -> Option<String>,
        config: impl Fn(&str) -> Option<String>,
    ) -> Program {
        let set = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
        let (command, shell, source) = if let Some(c) = set(env("GIT_SSH_COMMAND")) {
            (c, true, "GIT_SSH_COMMAND")
        } else if let Some(c) = set(config("core.sshCommand")) {
            (c, true, "core.sshCommand")
        } else if let Some(c) = set(env("GIT_SSH")) {
            (c, false, "GIT_SSH")
        } else {
            ("ssh".to_string(), false, "ssh")
        };
        let variant = match set(env("GIT_SSH_VARIANT")).or_else(|| set(config("ssh.variant"))) {
            Some(v) => Variant::named(v.trim()),
            None if shell => Variant::of_program(first_word(&command).unwrap_or_default()),
            None => Variant::of_program(&command),
        };
        Program {
            command,
            shell,
            variant,
            source,
        }
    }

    /// The command line to run with `args` (git's `prepare_shell_cmd`: through `/bin/sh
    /// -c` only when the command has shell metacharacters or spaces; git runs its
    /// `SHELL_PATH`, not an `sh` looked up in `PATH`), except [`Program::plain_words`].
    fn command(&self, args: &[String]) -> Command {
        const META: &[char] = &[
            '|', '&', ';', '<', '>', '(', ')', '$', '`', '\\', '"', '\'', ' ', '\t', '\n', '*',
            '?', '[', '#', '~', '=', '%',
        ];
        if self.shell && self.command.contains(META) {
            if let Some((program, words)) = self.plain_words() {
                let mut c = Command::new(program);
                c.args(words).args(args);
                return c;
            }
            let mut c = Command::new(SHELL);
            c.arg("-c")
                .arg(format!("{} \"$@\"", self.command))
                .arg(&self.command)
                .args(args);
            c
        } else {
            let mut c = Command::new(&self.command);
            c.args(args);
            c
        }
    }

    /// A shell command that `sh` would run as it is written: an ssh program (named ssh,
    /// plink or tortoiseplink) and words with no quotes, expansions, redirections or
    /// comments between them, such as `ssh -F /path/config -o Name=value`. Run directly,
    /// that is what `sh -c` would run, one process fewer before ssh and after it.
    fn plain_words(&self) -> Option<(&str, Vec<&str>)> {
        const SHELL_ONLY: &[char] = &[
            '|', '&', ';', '<', '>', '(', ')', '$', '`', '\\', '"', '\'', '\n', '*', '?', '[', '#',
            '~',
        ];
        if self.command.contains(SHELL_ONLY) {
            return None;
        }
        let mut words = self.command.split([' ', '\t']).filter(|w| !w.is_empty());
        let program = words.next()?;
        let ssh = !program.contains('=')
            && matches!(
                Variant::of_program(program),
                Variant::OpenSsh | Variant::Plink | Variant::TortoisePlink
            );
        ssh.then(|| (program, words.collect()))
    }

    /// The configuration OpenSSH would apply for `address` (`ssh -G`), `None` when the
    /// program does not understand `-G`.
    fn applied(&self, address: &Address) -> Option<Vec<u8>> {
        let mut args = vec!["-G".to_string()];
        if let Some(p) = address.port {
            args.extend(["-p".into(), p.to_string()]);
        }
        args.push(address.destination());
        self.command(&args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| o.stdout)
    }

    /// [`Program::resolve`] with the environment and `repo`'s configuration.
    fn of_repo(repo: &git2::Repository) -> Program {
        let config = repo.config().ok().and_then(|mut c| c.snapshot().ok());
        Program::resolve(crate::util::env::var, |k| {
            config.as_ref().and_then(|c| c.get_string(k).ok())
        })
    }

    /// The variant, probing an unknown program with `-G` as git does.
    fn variant(&self, address: &Address) -> Variant {
        match self.variant {
            Variant::Auto if self.applied(address).is_some() => Variant::OpenSsh,
            Variant::Auto => Variant::Simple,
            known => known,
        }
    }

    /// Where OpenSSH really connects for `address` (`HostName`, `Port` and `HostKeyAlias`
    /// of the config applied), for the known_hosts hint; `None` for other variants or
    /// when `-G` fails.
    fn resolved(&self, address: &Address) -> Option<(String, Option<u16>)> {
        self.connects(address, &["hostkeyalias", "hostname"])
    }

    /// The host name and port OpenSSH would connect to for `address` (`HostName`,
    /// `Port` of `ssh -G`); `None` for other variants or when `-G` fails.
    fn connects_to(&self, address: &Address) -> Option<(String, Option<u16>)> {
        self.connects(address, &["hostname"])
    }

    /// The first of `host_keys` `ssh -G` gives a value for, with its `port`.
    fn connects(&self, address: &Address, host_keys: &[&str]) -> Option<(String, Option<u16>)> {
        if self.variant(address) != Variant::OpenSsh {
            return None;
        }
        let out = self.applied(address)?;
        let text = String::from_utf8_lossy(&out);
        let value = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
                .map(str::trim)
                .filter(|v| !v.is_empty())
        };
        let host = host_keys.iter().find_map(|k| value(k))?;
        Some((host.to_string(), value("port").and_then(|p| p.parse().ok())))
    }

    /// The program as messages name it (its first word, and where it came from).
    fn name(&self) -> String {
        let first = if self.shell {
            first_word(&self.command).unwrap_or("?")
        } else {
            &self.command
        };
        let base = first.rsplit('/').next().unwrap_or(first);
        if self.source == "ssh" {
            base.to_string()
        } else {
            format!("{base} (from {})", self.source)
        }
    }
}

/// The first word of a shell command (quotes removed), as git's `split_cmdline` finds it.
fn first_word(command: &str) -> Option<&str> {
    let t = command.trim_start();
    let (quote, rest) = match t.chars().next()? {
        q @ ('\'' | '"') => (Some(q), &t[1..]),
        _ => (None, t),
    };
    match quote {
        Some(q) => rest.split(q).next(),
        None => rest.split(char::is_whitespace).next(),
    }
}

thread_local! {
    /// The program for the remote operation running on this thread (libgit2 creates the
    /// transport on the caller's thread; its factory has no repository to read).
    static PROGRAM: RefCell<Option<Program>> = const { RefCell::new(None) };
}

/// Holds the repository's ssh program for the transports created on this thread until
/// dropped.
pub(super) struct Configured {
    previous: Option<Program>,
}

impl Drop for Configured {
    fn drop(&mut self) {
        let previous = self.previous.take();
        PROGRAM.with(|p| *p.borrow_mut() = previous);
    }
}

/// Resolves the ssh program from the environment and `repo`'s git config (which includes
/// the global and system files) for the remote operations that follow.
pub(super) fn configure(repo: &git2::Repository) -> Configured {
    let program = Program::of_repo(repo);
    let previous = PROGRAM.with(|p| p.borrow_mut().replace(program));
    Configured { previous }
}

/// Who clones a printed URL: the two read a path differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cloner {
    /// source-controller, on go-git: only `ssh://` URLs, and the path is sent as it is —
    /// `ssh://host/~/x` asks for `/~/x` (go-git v5.19's ssh transport), so no `ssh://`
    /// URL reaches a path relative to the login's home on a plain sshd.
    Flux,
    /// Argo CD's repo-server, on the git CLI: scp-like remotes as they are, and
    /// `ssh://host/~/x` is git's own spelling of `host:x` relative to the home.
    Argo,
}

/// The `ssh://` URL `cloner` clones the SSH remote `url` from, and what the operator
/// should know about it; `None` when `url` is not an SSH remote, or when Argo CD takes it
/// as it is (an scp-like `user@host:path`, which the git CLI reads as the user's git
/// does). A host that is an alias of the SSH configuration (`ssh -G`, with the program git
/// would run) becomes the host and port it stands for — the alias exists only on this
/// machine.
pub(super) fn cloned_url(
    repo: &git2::Repository,
    url: &str,
    cloner: Cloner,
) -> Option<(String, Vec<String>)> {
    let scp = !url.contains("://");
    let lower = url.to_ascii_lowercase();
    let ssh = SCHEMES
        .iter()
        .any(|s| lower.starts_with(&format!("{s}://")));
    if !(ssh || scp && !url.starts_with('/')) {
        return None;
    }
    let address = parse(url).ok()?;
    let program = Program::of_repo(repo);
    let mut notes = Vec::new();
    let (host, port) = match program.connects_to(&address) {
        Some((real, port)) if !real.eq_ignore_ascii_case(&address.host) => {
            let port = port.filter(|p| *p != 22);
            notes.push(format!(
                "{} is an alias of your SSH configuration (ssh -G: {real}{}); the printed URL names that host, which the controller can resolve",
                address.host,
                port.map(|p| format!(" port {p}")).unwrap_or_default()
            ));
            (real, port)
        }
        _ if cloner == Cloner::Argo && scp && !url.starts_with('[') => return None,
        _ => (address.host.clone(), address.port),
    };
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host
    };
    let user = address
        .user
        .as_ref()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let port = port.map(|p| format!(":{p}")).unwrap_or_default();
    let base = format!("ssh://{user}{host}{port}");
    let printed = ssh_path(&base, &address.path, cloner, url, &mut notes);
    Some((printed, notes))
}

/// `base` and `path` as `cloner` reads them, with a note where a server could read them
/// otherwise.
fn ssh_path(base: &str, path: &str, cloner: Cloner, url: &str, notes: &mut Vec<String>) -> String {
    if path.starts_with('/') {
        return format!("{base}{path}");
    }
    let home = path.strip_prefix("~/").unwrap_or(path);
    match cloner {
        Cloner::Argo => {
            if !path.starts_with('~') {
                notes.push(format!(
                    "{} names a path relative to the login's home directory: printed as git spells it, {base}/~/{path}; a forge (GitHub, GitLab, Gitea, Bitbucket) serves it at {base}/{path} — pass --repo-url with that one if yours is a forge",
                    redact::url(url)
                ));
                return format!("{base}/~/{path}");
            }
            format!("{base}/{path}")
        }
        Cloner::Flux => {
            notes.push(format!(
                "{} names a path relative to the login's home directory: printed as {base}/{home}, as forges (GitHub, GitLab, Gitea, Bitbucket) read it; source-controller (go-git) cannot reach a home-relative path on a plain sshd (it sends {base}/~/{home} as the absolute path /~/{home}) — there, pass --repo-url with the absolute path, {base}/<home directory>/{home}",
                redact::url(url)
            ));
            format!("{base}/{home}")
        }
    }
}

/// A receive-pack connection started ahead of its push ([`prewarm`]), with the URL it
/// serves; the push's first `action` for that URL takes it.
static WARM: Mutex<Option<(String, Channel)>> = Mutex::new(None);

/// Starts ssh for a push to `url` now, so that its connection and authentication — most
/// of an SSH push's time — run while the commit is being built; the push's transport
/// takes the running channel instead of starting another. Nothing for a URL that is not
/// SSH; a failure is left for the push itself to meet and explain.
pub(super) fn prewarm(repo: &git2::Repository, url: &str) {
    let Ok(address) = parse(url) else {
        return;
    };
    let program = Program::of_repo(repo);
    if let Ok(channel) = Channel::open(&program, &address, "git-receive-pack")
        && let Ok(mut warm) = WARM.lock()
    {
        *warm = Some((url.to_string(), channel));
    }
}

/// Ends a prewarmed channel no push took (the branch was up to date, or the push failed
/// before connecting).
pub(super) fn discard_warm() {
    let unused = WARM.lock().ok().and_then(|mut w| w.take());
    drop(unused);
}

/// The prewarmed channel for `url`, if there is one.
fn take_warm(url: &str) -> Option<Channel> {
    let mut warm = WARM.lock().ok()?;
    match warm.as_ref() {
        Some((for_url, _)) if for_url == url => warm.take().map(|(_, c)| c),
        _ => None,
    }
}

/// libgit2's transport factory for the [`SCHEMES`].
pub(super) fn transport(remote: &git2::Remote<'_>) -> Result<Transport, git2::Error> {
    let program = PROGRAM.with(|p| p.borrow().clone()).unwrap_or_else(|| {
        let config = git2::Config::open_default()
            .ok()
            .and_then(|mut c| c.snapshot().ok());
        Program::resolve(crate::util::env::var, |k| {
            config.as_ref().and_then(|c| c.get_string(k).ok())
        })
    });
    Transport::smart(remote, false, Ssh { program })
}

struct Ssh {
    program: Program,
}

fn net_error(message: String) -> git2::Error {
    git2::Error::new(
        git2::ErrorCode::GenericError,
        git2::ErrorClass::Net,
        message,
    )
}

impl SmartSubtransport for Ssh {
    fn action(
        &self,
        url: &str,
        action: Service,
    ) -> Result<Box<dyn SmartSubtransportStream>, git2::Error> {
        if action == Service::ReceivePackLs
            && let Some(channel) = take_warm(url)
        {
            return Ok(Box::new(channel));
        }
        let address = parse(url)
            .map_err(|why| net_error(format!("SSH remote '{}': {why}", redact::url(url))))?;
        let service = match action {
            Service::UploadPackLs | Service::UploadPack => "git-upload-pack",
            Service::ReceivePackLs | Service::ReceivePack => "git-receive-pack",
        };
        let channel = Channel::open(&self.program, &address, service)
            .map_err(|e| net_error(e.to_string()))?;
        Ok(Box::new(channel))
    }

    fn close(&self) -> Result<(), git2::Error> {
        Ok(())
    }
}

/// One running ssh: the git protocol on its stdin/stdout, its stderr kept for a message.
struct Channel {
    /// `None` once handed to [`CLOSING`] (at drop).
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    /// Written by libgit2, not yet sent to ssh ([`Channel::send`]).
    held: Vec<u8>,
    stdout: ChildStdout,
    stderr: Arc<Mutex<Vec<u8>>>,
    reader: Option<JoinHandle<()>>,
    address: Address,
    program: Program,
    /// The failure, once known (the process is reaped only once).
    failed: Option<Option<String>>,
}

impl Channel {
    fn open(program: &Program, address: &Address, service: &str) -> io::Result<Channel> {
        let mut args = program.variant(address).options(address.port)?;
        args.push(address.destination());
        args.push(format!("{service} {}", sq_quote(&address.path)));
        let name = program.name();
        let mut child = program
            .command(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| io::Error::new(e.kind(), format!("cannot run {name}: {e}")))?;
        let (Some(stdin), Some(stdout), Some(mut err)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::other(format!("{name}: no pipes")));
        };
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&stderr);
        let reader = std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n) = err.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                if let Ok(mut kept) = sink.lock() {
                    kept.extend_from_slice(&chunk[..n]);
                    let excess = kept.len().saturating_sub(STDERR_KEEP);
                    kept.drain(..excess);
                }
            }
        });
        Ok(Channel {
            child: Some(child),
            stdin: Some(stdin),
            held: Vec::new(),
            stdout,
            stderr,
            reader: Some(reader),
            address: address.clone(),
            program: program.clone(),
            failed: None,
        })
    }

    /// After the stream ended or broke: waits for ssh and says why it failed (`None`
    /// when it exited 0).
    fn failure(&mut self) -> Option<String> {
        if let Some(known) = &self.failed {
            return known.clone();
        }
        self.stdin.take();
        self.held.clear();
        let status = self.child.as_mut().and_then(|c| wait(c, EXIT_WAIT));
        // The stderr reader ends when ssh (and anything it started) closes the pipe.
        let start = Instant::now();
        while self.reader.as_ref().is_some_and(|r| !r.is_finished())
            && start.elapsed() < Duration::from_secs(1)
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        if self.reader.as_ref().is_some_and(JoinHandle::is_finished) {
            self.reader.take().map(JoinHandle::join);
        }
        let stderr = self
            .stderr
            .lock()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        let result = match status {
            Some(s) if s.success() => None,
            status => {
                let resolved = match stderr.contains(HOST_KEY_FAILED) {
                    true => self.program.resolved(&self.address),
                    false => None,
                };
                let name = self.program.name();
                if unanswered(&stderr) {
                    super::far_end_silent(crate::delivery::Reason::Unreachable);
                }
                Some(explain(&name, &self.address, status, &stderr, resolved))
            }
        };
        self.failed = Some(result.clone());
        result
    }

    fn broken(&mut self, e: io::Error) -> io::Error {
        match self.failure() {
            Some(message) => io::Error::other(message),
            None => e,
        }
    }
}

/// Waits up to `limit` for `child`; kills it past that (`None`: it had to be killed).
fn wait(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if start.elapsed() < limit => {
                // ssh exits a few milliseconds after its input closes: a fine poll (one
                // waitpid each) so the push does not wait longer than ssh does.
                let fine = start.elapsed() < Duration::from_secs(1);
                std::thread::sleep(Duration::from_millis(if fine { 1 } else { 20 }));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

impl Channel {
    /// Sends what libgit2 wrote since the last read as one write. The git protocol
    /// always reads after it writes (a push's command and pack come in a dozen pieces
    /// before the report is read); each piece sent alone would wake ssh and become an
    /// SSH packet of its own, and on the server wake sshd and git-receive-pack again.
    fn send(&mut self) -> io::Result<()> {
        if self.held.is_empty() {
            return Ok(());
        }
        let result = match self.stdin.as_mut() {
            Some(stdin) => stdin.write_all(&self.held),
            None => Err(io::Error::from(io::ErrorKind::BrokenPipe)),
        };
        self.held.clear();
        result.map_err(|e| self.broken(e))
    }
}

impl Read for Channel {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.send()?;
        match self.stdout.read(buf) {
            Ok(0) => match self.failure() {
                Some(message) => Err(io::Error::other(message)),
                None => Ok(0),
            },
            Ok(n) => Ok(n),
            Err(e) => Err(self.broken(e)),
        }
    }
}

impl Write for Channel {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.stdin.is_none() {
            return Err(self.broken(io::Error::from(io::ErrorKind::BrokenPipe)));
        }
        self.held.extend_from_slice(buf);
        if self.held.len() >= WRITE_HOLD {
            self.send()?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()?;
        let result = match self.stdin.as_mut() {
            Some(stdin) => stdin.flush(),
            None => Ok(()),
        };
        result.map_err(|e| self.broken(e))
    }
}

/// Connections whose input is closed, still to be waited for ([`reap`]).
static CLOSING: Mutex<Vec<Child>> = Mutex::new(Vec::new());

impl Drop for Channel {
    fn drop(&mut self) {
        if self.failed.is_none() {
            let _ = self.send();
            self.stdin.take();
            // ssh now says goodbye to the server and exits; that is waited for in
            // `reap`, so the caller records the push meanwhile.
            if let Some(child) = self.child.take() {
                match CLOSING.lock() {
                    Ok(mut closing) => closing.push(child),
                    Err(_) => {
                        let mut child = child;
                        wait(&mut child, EXIT_WAIT);
                    }
                }
            }
        }
    }
}

/// Waits for every connection closed since the last call (up to [`EXIT_WAIT`] each,
/// then kills it). The push was settled by the server's report before its connection
/// closed; what is left is ssh's goodbye to the server.
pub(super) fn reap() {
    let closing = CLOSING
        .lock()
        .map(|mut c| std::mem::take(&mut *c))
        .unwrap_or_default();
    for mut child in closing {
        wait(&mut child, EXIT_WAIT);
    }
}

/// Whether ssh's words say the server did not answer (refused, unresolved, timed out,
/// cut): a push that is owed, not refused. A host-key or authentication failure is an
/// answer.
fn unanswered(stderr: &str) -> bool {
    const SILENT: [&str; 7] = [
        "Connection refused",
        "Connection timed out",
        "Could not resolve hostname",
        "No route to host",
        "Network is unreachable",
        "Connection reset",
        "Operation timed out",
    ];
    !stderr.contains(HOST_KEY_FAILED)
        && !stderr.contains("Permission denied")
        && SILENT.iter().any(|s| stderr.contains(s))
}

/// What OpenSSH says when it refuses a host key (unknown or changed).
const HOST_KEY_FAILED: &str = "Host key verification failed";

/// The message for a failed ssh: what to do for a host-key or authentication failure,
/// else ssh's last words. Everything from ssh's stderr goes through [`redact::detail`].
/// `resolved` is where ssh connected (host, port) when known.
fn explain(
    program: &str,
    address: &Address,
    status: Option<ExitStatus>,
    stderr: &str,
    resolved: Option<(String, Option<u16>)>,
) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if stderr.contains(HOST_KEY_FAILED) {
        return host_key(address, stderr, resolved);
    }
    let status = match status {
        Some(s) => match s.code() {
            Some(c) => format!("exit status {c}"),
            None => s.to_string(),
        },
        None => format!(
            "did not exit within {}s and was killed",
            EXIT_WAIT.as_secs()
        ),
    };
    let tail: Vec<String> = lines
        .iter()
        .rev()
        .take(3)
        .rev()
        .map(|l| redact::detail(&l.chars().take(300).collect::<String>()))
        .collect();
    let said = match tail.is_empty() {
        true => String::new(),
        false => format!(": {}", tail.join(" / ")),
    };
    let mut message = format!("{program} to {} failed ({status}){said}", address.shown());
    if stderr.contains("Permission denied") {
        let end = message.trim_end_matches('.').len();
        message.truncate(end);
        message.push_str(
            ". No key the server accepts: add it to ssh-agent (ssh-add), name it with IdentityFile in ~/.ssh/config, or set core.sshCommand or GIT_SSH_COMMAND to 'ssh -i KEY'; clinv runs ssh with BatchMode=yes, so an encrypted key must be in the agent",
        );
    }
    message
}

/// Says how to add (or replace) the host key, for the host and port ssh looked up: from
/// its own message when it names them, else `resolved`, else the URL's.
fn host_key(address: &Address, stderr: &str, resolved: Option<(String, Option<u16>)>) -> String {
    let named = |start: &str, end: &str| {
        stderr.lines().find_map(|l| {
            let rest = &l[l.find(start)? + start.len()..];
            Some(rest[..rest.find(end)?].trim().to_string())
        })
    };
    let spec = named("host key is known for ", " and you have")
        .or_else(|| named("Host key for ", " has changed"))
        .filter(|s| !s.is_empty() && !s.chars().any(char::is_control))
        .map(|s| redact::detail(&s));
    let (host, port) = match spec.as_deref() {
        Some(s) => match s.strip_prefix('[').and_then(|r| r.split_once("]:")) {
            Some((h, p)) => (h.to_string(), p.parse::<u16>().ok()),
            None => (s.to_string(), None),
        },
        None => resolved.unwrap_or_else(|| (address.host.clone(), address.port)),
    };
    let shown = match port {
        Some(p) if p != 22 => format!("[{host}]:{p}"),
        _ => host.clone(),
    };
    let keyscan = match port {
        Some(p) if p != 22 => format!("ssh-keyscan -p {p} {host}"),
        _ => format!("ssh-keyscan {host}"),
    };
    let changed = stderr.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
        || stderr.contains("has changed and you have requested strict checking");
    if changed {
        format!(
            "ssh: the host key of {shown} differs from the one in known_hosts (Host key verification failed); clinv does not connect. If the server's key really changed, check its new fingerprint with the server's administrator, remove the old entry with `ssh-keygen -R '{shown}'` and add the new one with `{keyscan} >> ~/.ssh/known_hosts`"
        )
    } else {
        format!(
            "ssh: the host key of {shown} is not in known_hosts (Host key verification failed); clinv never accepts an unknown host key. Add it after checking its fingerprint with the server's administrator: `{keyscan} > key && ssh-keygen -lf key` shows the fingerprint, then `cat key >> ~/.ssh/known_hosts` (or the UserKnownHostsFile your ssh config names)"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(user: Option<&str>, host: &str, port: Option<u16>, path: &str) -> Address {
        Address {
            user: user.map(str::to_string),
            host: host.into(),
            port,
            path: path.into(),
        }
    }

    #[test]
    fn urls_parse_as_git_parses_them() {
        let cases = [
            (
                "git@host:org/repo.git",
                addr(Some("git"), "host", None, "org/repo.git"),
            ),
            (
                "host:/srv/repo.git",
                addr(None, "host", None, "/srv/repo.git"),
            ),
            ("alias:~/repo", addr(None, "alias", None, "~/repo")),
            (
                "[git@host:2222]:org/repo.git",
                addr(Some("git"), "host", Some(2222), "org/repo.git"),
            ),
            ("[::1]:repo", addr(None, "::1", None, "repo")),
            (
                "ssh://git@host:2222/org/repo.git",
                addr(Some("git"), "host", Some(2222), "/org/repo.git"),
            ),
            (
                "ssh://host/~git/repo",
                addr(None, "host", None, "~git/repo"),
            ),
            ("ssh://host/~/repo", addr(None, "host", None, "~/repo")),
            ("SSH://h:/r", addr(None, "h", None, "/r")),
            ("git+ssh://[::1]:22/r", addr(None, "::1", Some(22), "/r")),
            (
                "ssh+git://u@[fe80::1]/r",
                addr(Some("u"), "fe80::1", None, "/r"),
            ),
            ("ssh://h/a%20b", addr(None, "h", None, "/a b")),
        ];
        for (url, want) in cases {
            assert_eq!(parse(url).as_ref(), Ok(&want), "{url}");
        }
    }

    #[test]
    fn bad_urls_say_why() {
        for (url, why) in [
            ("ssh://host", "no path"),
            ("ssh://host:99999/r", "port '99999'"),
            ("ssh://host:0/r", "port '0'"),
            ("ssh://host:22x/r", "port '22x'"),
            ("ssh://-oProxyCommand=x/r", "starting with '-'"),
            ("-oProxyCommand=x:r", "starting with '-'"),
            ("ssh://-u@h/r", "starting with '-'"),
            ("host:", "no path"),
            (":path", "no host"),
            ("ssh://h/%zz", "hex"),
            ("ssh://h/a%0Ab", "control"),
            ("./a:b", "local path"),
            ("https://h/r", "not an SSH URL"),
        ] {
            let err = parse(url).expect_err(url).to_string();
            assert!(err.contains(why), "{url}: {err}");
        }
    }

    #[test]
    fn paths_are_quoted_for_the_remote_shell_as_git_quotes_them() {
        assert_eq!(sq_quote("/srv/a b.git"), "'/srv/a b.git'");
        assert_eq!(sq_quote("it's!"), "'it'\\''s'\\!''");
        assert_eq!(sq_quote("$(x)`y`"), "'$(x)`y`'");
    }

    fn resolve(env: &[(&str, &str)], config: &[(&str, &str)]) -> Program {
        let get = |list: &[(&str, &str)], k: &str| {
            list.iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(k))
                .map(|(_, v)| v.to_string())
        };
        Program::resolve(|k| get(env, k), |k| get(config, k))
    }

    #[test]
    fn the_program_is_chosen_in_git_order() {
        let p = resolve(&[], &[]);
        assert_eq!(
            (p.command.as_str(), p.shell, p.variant),
            ("ssh", false, Variant::OpenSsh)
        );
        let p = resolve(&[("GIT_SSH", "/usr/bin/plink")], &[]);
        assert_eq!((p.shell, p.variant), (false, Variant::Plink));
        let p = resolve(
            &[("GIT_SSH", "/x/ssh")],
            &[("core.sshCommand", "ssh -F /cfg")],
        );
        assert_eq!((p.command.as_str(), p.shell), ("ssh -F /cfg", true));
        assert_eq!(p.source, "core.sshCommand");
        let p = resolve(
            &[("GIT_SSH_COMMAND", "'/opt/my tools/ssh' -v")],
            &[("core.sshCommand", "other")],
        );
        assert_eq!((p.source, p.variant), ("GIT_SSH_COMMAND", Variant::OpenSsh));
        let p = resolve(&[("GIT_SSH_COMMAND", "wrapper --x")], &[]);
        assert_eq!(p.variant, Variant::Auto);
        let p = resolve(
            &[("GIT_SSH_COMMAND", "wrapper")],
            &[("ssh.variant", "simple")],
        );
        assert_eq!(p.variant, Variant::Simple);
        let p = resolve(
            &[("GIT_SSH_COMMAND", "wrapper"), ("GIT_SSH_VARIANT", "putty")],
            &[("ssh.variant", "simple")],
        );
        assert_eq!(p.variant, Variant::Plink);
        // Empty is unset.
        let p = resolve(&[("GIT_SSH_COMMAND", " ")], &[]);
        assert_eq!(p.source, "ssh");
    }

    #[test]
    fn options_follow_the_variant() {
        assert_eq!(
            Variant::OpenSsh.options(Some(2222)).unwrap(),
            ["-o", "BatchMode=yes", "-p", "2222"]
        );
        assert_eq!(
            Variant::OpenSsh.options(None).unwrap(),
            ["-o", "BatchMode=yes"]
        );
        assert_eq!(
            Variant::Plink.options(Some(2)).unwrap(),
            ["-batch", "-P", "2"]
        );
        assert!(Variant::Simple.options(None).unwrap().is_empty());
        assert!(
            Variant::Simple
                .options(Some(2))
                .unwrap_err()
                .to_string()
                .contains("simple")
        );
    }

    #[test]
    fn shell_commands_get_the_arguments_after_the_command() {
        let p = resolve(&[("GIT_SSH_COMMAND", "ssh -F ~/c")], &[]);
        let c = p.command(&["h".into(), "git-upload-pack '/r'".into()]);
        let args: Vec<_> = c.get_args().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(c.get_program(), "/bin/sh");
        assert_eq!(
            args,
            [
                "-c",
                "ssh -F ~/c \"$@\"",
                "ssh -F ~/c",
                "h",
                "git-upload-pack '/r'"
            ]
        );
        // Plain words after an ssh program: what sh would run, run directly.
        let p = resolve(&[("GIT_SSH_COMMAND", " /usr/bin/ssh  -F /c\t-o A=b ")], &[]);
        let c = p.command(&["h".into(), "git-upload-pack '/r'".into()]);
        let args: Vec<_> = c.get_args().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(c.get_program(), "/usr/bin/ssh");
        assert_eq!(args, ["-F", "/c", "-o", "A=b", "h", "git-upload-pack '/r'"]);
        // Anything else goes through the shell as git runs it.
        for command in [
            "FOO=1 ssh -v",
            "wrapper --x",
            "ssh -o 'A b'",
            "ssh $OPTS",
            "ssh -v # note",
            "ssh -i ~/k",
            "exec ssh -v",
        ] {
            let p = resolve(&[("GIT_SSH_COMMAND", command)], &[]);
            assert_eq!(p.command(&[]).get_program(), "/bin/sh", "{command}");
        }
        let p = resolve(&[("GIT_SSH_COMMAND", "myssh")], &[]);
        assert_eq!(p.command(&[]).get_program(), "myssh");
    }

    /// A program run as the ssh of a test: `command` through the shell, no options.
    fn fake_ssh(command: &str) -> Program {
        Program {
            command: format!("{command} #"),
            shell: true,
            variant: Variant::Simple,
            source: "GIT_SSH_COMMAND",
        }
    }

    #[test]
    fn what_libgit2_writes_reaches_ssh_in_one_piece_at_the_next_read() {
        // dd reads once (one read(2), whatever has arrived), says how many bytes it got
        // and exits: the pieces written before the read must arrive together.
        let program = fake_ssh("dd bs=65536 count=1 of=/dev/null 2>&1");
        let mut channel = Channel::open(&program, &addr(None, "h", None, "/r"), "x").unwrap();
        std::thread::sleep(Duration::from_millis(200));
        for _ in 0..30 {
            let _ = channel.write_all(b"0123456789");
            std::thread::sleep(Duration::from_millis(2));
        }
        let mut said = String::new();
        channel.read_to_string(&mut said).unwrap();
        assert!(said.contains("300 bytes"), "{said}");
    }

    #[test]
    fn a_closed_connection_is_waited_for_by_reap_not_by_drop() {
        // ssh ends 2 s after the drop: a drop that waited for it would take that long.
        let program = fake_ssh("sleep 2");
        let channel = Channel::open(&program, &addr(None, "h", None, "/r"), "x").unwrap();
        let start = Instant::now();
        drop(channel);
        assert!(
            start.elapsed() < Duration::from_millis(1500),
            "drop waited for ssh"
        );
        reap();
        assert!(
            start.elapsed() >= Duration::from_millis(1500),
            "reap did not wait"
        );
        assert!(CLOSING.lock().unwrap().is_empty());
    }

    #[test]
    fn host_key_failures_say_how_to_add_the_key() {
        let a = addr(Some("git"), "alias", Some(2222), "/r");
        let stderr = "No ED25519 host key is known for [127.0.0.1]:18522 and you have requested strict checking.\r\nHost key verification failed.\r\n";
        let m = explain("ssh", &a, None, stderr, None);
        assert!(m.contains("ssh-keyscan -p 18522 127.0.0.1"), "{m}");
        assert!(m.contains("never accepts"), "{m}");
        let stderr = "No RSA host key is known for git.example and you have requested strict checking.\nHost key verification failed.\n";
        let m = explain("ssh", &a, None, stderr, None);
        assert!(m.contains("`ssh-keyscan git.example > key"), "{m}");
        // Without ssh's line, the URL's host and port.
        let m = explain("ssh", &a, None, "Host key verification failed.\n", None);
        assert!(m.contains("ssh-keyscan -p 2222 alias"), "{m}");
        // Else what `ssh -G` resolved the alias to.
        let resolved = Some(("10.0.0.9".to_string(), Some(2200)));
        let m = explain("ssh", &a, None, "Host key verification failed.\n", resolved);
        assert!(m.contains("ssh-keyscan -p 2200 10.0.0.9"), "{m}");
        let changed = "@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\nHost key for [h]:2200 has changed and you have requested strict checking.\nHost key verification failed.\n";
        let m = explain("ssh", &a, None, changed, None);
        assert!(m.contains("ssh-keygen -R '[h]:2200'"), "{m}");
        assert!(m.contains("differs"), "{m}");
    }

    #[test]
    fn other_failures_quote_ssh_redacted() {
        let a = addr(Some("u:pw"), "h", None, "/r");
        let m = explain(
            "ssh",
            &a,
            None,
            "one\ntwo\nfetching https://user:tok@h/x failed\nu@h: Permission denied (publickey).\n",
            None,
        );
        assert!(!m.contains("tok") && !m.contains("pw"), "{m}");
        assert!(!m.contains("one"), "only the last lines: {m}");
        assert!(m.contains("ssh-add"), "{m}");
        assert!(m.contains("(publickey). No key"), "{m}");
    }
}
