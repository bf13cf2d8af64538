//! Registry credentials as the container tools find them: `--creds-env NAME`, else the
//! Docker config (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`) — a
//! credential helper (`credHelpers.<registry>`, else `credsStore`: the program
//! `docker-credential-<name>`, asked `get` with the registry on stdin), then the `auths`
//! entry. Credentials never reach a message: errors name the file, the variable or the
//! helper, never what they hold.

use crate::error::{OciError, Result, chain};
use crate::util::helper::{Helper, HelperError};
use crate::util::{env, files};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Largest Docker config read.
const MAX_FILE: u64 = 4 << 20;

/// `(user, password)`.
pub type Credentials = (String, String);

/// The credentials for `registry` (`host[:port]`), none when nothing gives any.
///
/// # Errors
/// [`OciError::Credentials`]: a variable not set or not `user:password`, a config that is
/// not JSON, a helper that fails.
/// A credential helper asked is given until `until` at most (an owed push's end).
pub fn credentials(
    registry: &str,
    creds_env: Option<&str>,
    until: Option<std::time::Instant>,
) -> Result<Option<Credentials>> {
    if let Some(name) = creds_env {
        return from_env(name).map(Some);
    }
    let dir = env::var_os("DOCKER_CONFIG")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker")));
    let Some(path) = dir.map(|d| d.join("config.json")) else {
        return Ok(None);
    };
    let Ok(bytes) = files::read_bounded(&path, MAX_FILE) else {
        return Ok(None);
    };
    let config: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|_| bad(&path.display().to_string(), "not a JSON document"))?;
    let helper = config["credHelpers"][registry]
        .as_str()
        .or(config["credsStore"].as_str());
    if let Some(helper) = helper.filter(|h| !h.is_empty())
        && let Some(found) = from_helper(helper, registry, until)?
    {
        return Ok(Some(found));
    }
    from_auths(&config["auths"][registry], &path, registry)
}

/// The Bearer token in the variable `name` (`--token-env`).
///
/// # Errors
/// [`OciError::Credentials`]: the variable is not set, empty or not one line.
pub fn token(name: &str) -> Result<String> {
    let origin = format!("--token-env {name}");
    let value = env::var(name).ok_or_else(|| bad(&origin, "the variable is not set"))?;
    let token = value.trim();
    if token.is_empty() || token.contains(char::is_whitespace) {
        return Err(bad(&origin, "not a token (one word, not empty)").into());
    }
    Ok(token.to_string())
}

fn bad(origin: &str, message: &str) -> OciError {
    OciError::Credentials {
        origin: origin.to_string(),
        message: message.to_string(),
    }
}

fn from_env(name: &str) -> Result<Credentials> {
    let origin = format!("--creds-env {name}");
    let value = env::var(name)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| bad(&origin, "the variable is not set"))?;
    let (user, password) = value
        .split_once(':')
        .ok_or_else(|| bad(&origin, "not user:password"))?;
    Ok((user.to_string(), password.to_string()))
}

/// The `auths.<registry>` entry: `auth` (base64 `user:password`) or `username` and
/// `password`.
fn from_auths(
    entry: &serde_json::Value,
    path: &Path,
    registry: &str,
) -> Result<Option<Credentials>> {
    use base64::Engine as _;
    let origin = path.display().to_string();
    if let Some(auth) = entry["auth"].as_str() {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(auth.trim())
            .ok()
            .and_then(|d| String::from_utf8(d).ok())
            .ok_or_else(|| {
                bad(
                    &origin,
                    &format!("auths.{registry}.auth is not base64 of user:password"),
                )
            })?;
        let (u, p) = decoded.split_once(':').ok_or_else(|| {
            bad(
                &origin,
                &format!("auths.{registry}.auth is not user:password"),
            )
        })?;
        return Ok(Some((u.to_string(), p.to_string())));
    }
    match (entry["username"].as_str(), entry["password"].as_str()) {
        (Some(u), Some(p)) => Ok(Some((u.to_string(), p.to_string()))),
        _ => Ok(None),
    }
}

/// Asks `docker-credential-<helper> get` for `registry` through the helper runner
/// ([`crate::util::helper`]: bounded in time and output, never shown); `None` when it has
/// none ("credentials not found", as the helpers say it).
fn from_helper(
    helper: &str,
    registry: &str,
    until: Option<std::time::Instant>,
) -> Result<Option<Credentials>> {
    let program = format!("docker-credential-{helper}");
    let origin = format!("credentials for {registry}");
    let failed = |what: &str| bad(&origin, &format!("{program} {what}"));
    if !helper
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
    {
        return Err(failed("is not a helper name").into());
    }
    let mut command = Command::new(&program);
    command.arg("get");
    let helper_failed = |e: HelperError| bad(&origin, &chain(&e));
    let mut asked = Helper::new(command).input(registry);
    if let Some(until) = until {
        asked = asked.deadline(until.saturating_duration_since(std::time::Instant::now()));
    }
    let out = asked.run().map_err(helper_failed)?;
    let not_found = String::from_utf8_lossy(&out.stdout).contains("credentials not found");
    if !out.status.success() && not_found {
        return Ok(None);
    }
    let out = out.succeeded().map_err(helper_failed)?;
    let answer: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|_| failed("did not answer with JSON"))?;
    match (answer["Username"].as_str(), answer["Secret"].as_str()) {
        (Some("<token>"), _) => {
            Err(failed("gave an identity token, which clinv does not exchange").into())
        }
        (Some(u), Some(s)) => Ok(Some((u.to_string(), s.to_string()))),
        _ => Err(failed("gave no Username and Secret").into()),
    }
}
