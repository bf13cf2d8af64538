//! The only module that talks to a Kubernetes API server.
//!
//! A publish is at most three requests when nothing changed: `GET` the live inventory
//! (the reachability probe, bounded by a short budget; it also tells created /
//! configured / unchanged and gives replay its stale guard), a server-side apply of the
//! CRD (whose response says whether it is Established), and a server-side apply of the
//! CR. Both applies use field manager `lok8s`, as `lo` does, so the two tools co-own the
//! objects. No discovery, no retries on top of these except the two the protocol needs
//! (waiting for `Established`, and a NotFound right after it).
//!
//! The agent adds three requests per pass: the same `GET`, a paged `LIST` of Helm release
//! Secrets (when RBAC allows), and a JSON merge patch of the status subresource under
//! field manager `clinv-agent` — a body that holds only `status`, sent to `/status`, so
//! it cannot touch `spec`.
//!
//! Every failure is classified ([`Reason`]) so callers can stay fail-soft and the
//! snapshot store can record why an inventory was queued. Error texts come from the
//! server's `Status` message or the transport error, never from credentials.
#![allow(clippy::disallowed_types)] // the one module that talks to kube

pub mod access;
mod plugin;
pub mod proxy;

use crate::delivery::{Reason, Target};
use crate::inventory::crd;
use crate::inventory::{self, ClusterInventory};
use crate::util::backoff::Policy;
use http_body_util::BodyExt;
use kube::api::{Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::{Request, Status};
use serde_json::Value;
use std::fmt;
use std::time::{Duration, Instant};

/// The field manager shared with `lo`.
pub const FIELD_MANAGER: &str = "lok8s";
/// The agent's own field manager for `status`.
pub const AGENT_FIELD_MANAGER: &str = "clinv-agent";
/// Largest page of Helm release Secrets read (each record can be about 1 MiB).
const MAX_SECRETS_BODY: usize = 48 << 20;
/// Release Secrets per page, and the most pages read in one pass.
const SECRETS_PAGE: u32 = 16;
const MAX_SECRET_PAGES: usize = 128;
/// Largest response body read from the server.
const MAX_BODY: usize = 8 << 20;

/// How the CRD's Established condition and a CR apply's NotFound are polled: 50 ms
/// doubling to 500 ms, no jitter (one client waiting for its own object), none started
/// after the deadline.
const POLL: Policy = Policy::exponential(Duration::from_millis(50), Duration::from_millis(500));
/// How long a CR apply answered NotFound is retried (the CRD can be Established a
/// moment before its endpoint serves).
const NOT_FOUND_RETRY: Duration = Duration::from_secs(5);
const CR_COLLECTION: &str = "/apis/lok8s.dev/v1alpha1/clusterinventories";
const CRD_COLLECTION: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// Which step failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Connect,
    Probe,
    Crd,
    Established,
    Cr,
    /// Listing Helm release Secrets (agent).
    Secrets,
    /// Patching the status subresource (agent).
    Status,
}

/// A classified failure.
#[derive(Debug, Clone)]
pub struct Failure {
    pub reason: Reason,
    pub step: Step,
    /// What the server or the transport said (no credentials).
    pub detail: String,
    /// The HTTP status, when the server answered.
    pub code: Option<u16>,
    /// A 404 that names the object (`details.name`): the resource type exists, the object
    /// does not. A 404 without it means the type (the CRD) is not served.
    pub missing_object: bool,
    /// A mistake in what the user asked for (an explicit `--kubeconfig` that does not
    /// exist, a `--context` the kubeconfig does not name): kubectl refuses it, and a
    /// delivery is refused too (exit 2) instead of being queued.
    pub usage: bool,
}

impl Failure {
    pub fn new(reason: Reason, step: Step, detail: impl Into<String>) -> Failure {
        Failure {
            reason,
            step,
            // Stored in snapshots as well as printed: a URL with user info loses it.
            detail: crate::util::redact::detail(&detail.into()),
            code: None,
            missing_object: false,
            usage: false,
        }
    }

    /// A [`Failure::usage`] mistake of the user's.
    pub fn usage(reason: Reason, detail: impl Into<String>) -> Failure {
        Failure {
            usage: true,
            ..Failure::new(reason, Step::Connect, detail)
        }
    }

    fn not_found(&self) -> bool {
        self.code == Some(404)
    }

    /// A 409 from a failed `resourceVersion` precondition: another writer changed the
    /// live object meanwhile (not a field conflict, which `--force-conflicts` settles).
    pub fn modified_meanwhile(&self) -> bool {
        self.code == Some(409) && self.detail.contains("has been modified")
    }
}

/// Timeouts and switches for one publish.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Budget for connecting and for the probe request.
    pub probe: Duration,
    /// Deadline for the whole operation.
    pub deadline: Duration,
    /// `--force-conflicts`.
    pub force: bool,
    /// `--take-over`: apply over a live ClusterInventory that belongs to another domain
    /// (or carries no domain label); without it that object is never written.
    pub take_over: bool,
    /// Server-side dry run: nothing is persisted.
    pub dry_run: bool,
    /// An end no request may pass, whenever the client was built (a budget shared by
    /// several clients: `replay --all`).
    pub until: Option<Instant>,
}

/// What happened to an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    Created,
    Configured,
    Unchanged,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Change::Created => "created",
            Change::Configured => "configured",
            Change::Unchanged => "unchanged",
        })
    }
}

/// The result of a successful publish.
#[derive(Debug, Clone)]
pub struct Applied {
    /// `Created` when the CRD was new, else `Configured` (SSA does not say whether a
    /// no-op apply changed anything, and a GET to find out would cost a request).
    pub crd: Change,
    pub cr: Change,
    /// The live CR before the apply, when it existed.
    pub before: Option<Value>,
    /// The CR as the server stored it (or would, in a dry run).
    pub after: Value,
    /// HTTP requests sent.
    pub requests: u32,
}

/// The live inventory, or which part is missing.
#[derive(Debug, Clone, PartialEq)]
pub enum Live {
    Found(Value),
    /// The ClusterInventory CRD is not served.
    NoCrd,
    /// The CRD is served but the object `cluster` does not exist.
    NoObject,
}

/// Decoded Helm release records from one listing.
#[derive(Debug, Default)]
pub struct HelmReleases {
    pub releases: Vec<crate::catalog::helm::Release>,
    /// Records that were not valid Helm release records.
    pub undecodable: usize,
    /// The page limit was reached before the end of the list.
    pub truncated: bool,
}

/// The outcome of delivering a queued inventory.
#[derive(Debug, Clone)]
pub enum Delivery {
    Applied(Applied),
    /// The live object was rendered later than this inventory: left alone.
    Stale {
        live_rendered_at: String,
    },
}

/// The live object's `renderedAt` when it is later than `cr`'s.
fn newer_rendered_at(live: &Value, cr: &ClusterInventory) -> Option<String> {
    let live_at = live.pointer("/spec/renderedAt").and_then(Value::as_str)?;
    let parse = crate::util::time::parse_rfc3339;
    match (parse(live_at), parse(&cr.spec.rendered_at)) {
        (Some(l), Some(c)) if l > c => Some(live_at.to_string()),
        _ => None,
    }
}

/// Why the live object is not `cr`'s domain's: its `lok8s.dev/domain` label names
/// another domain, or it has none. `None` when it is the same domain's.
fn other_domain(live: &Value, cr: &ClusterInventory) -> Option<String> {
    let want = cr.metadata.labels.get(inventory::DOMAIN_LABEL)?;
    other_domain_than(live, want).map(|why| format!("{why}; left as it is"))
}

/// [`other_domain`] for the domain named `want`: the one check of whose inventory a
/// live object is, for a delivery and for every read that shows it as `want`'s.
pub fn other_domain_than(live: &Value, want: &str) -> Option<String> {
    let have = live
        .pointer("/metadata/labels/lok8s.dev~1domain")
        .and_then(Value::as_str);
    match have {
        Some(have) if have == want => None,
        Some(have) => Some(format!(
            "the live ClusterInventory belongs to domain {have} ({} label), not {want}",
            inventory::DOMAIN_LABEL
        )),
        None => Some(format!(
            "the live ClusterInventory has no {} label, so it may belong to another domain than {want}",
            inventory::DOMAIN_LABEL
        )),
    }
}

/// A connected client with its limits.
pub struct Cluster {
    client: kube::Client,
    pub target: Target,
    opts: Options,
    started: Instant,
    requests: std::cell::Cell<u32>,
    /// One line per request (method, path, status, time) for `-v`.
    trace: std::cell::RefCell<Vec<String>>,
}

/// Parses and merges kubeconfig texts (the `KUBECONFIG` list rule: first wins).
///
/// # Errors
/// A text that is not a kubeconfig.
pub fn parse_kubeconfigs(texts: &[(String, String)]) -> Result<Kubeconfig, Failure> {
    let mut merged = Kubeconfig::default();
    for (origin, text) in texts {
        let next = Kubeconfig::from_yaml(text).map_err(|e| {
            // Only the first line: the parser's later lines quote the source, which may
            // hold a token or key.
            let e = e.to_string();
            let first = e.lines().next().unwrap_or_default();
            Failure::new(
                Reason::BadKubeconfig,
                Step::Connect,
                format!("{origin}: {first}"),
            )
        })?;
        merged = merged.merge(next).map_err(|e| {
            Failure::new(
                Reason::BadKubeconfig,
                Step::Connect,
                format!("{origin}: {e}"),
            )
        })?;
    }
    Ok(merged)
}

/// [`load_config_async`] on the process's runtime.
///
/// # Errors
/// As [`load_config_async`].
pub fn load_config(
    kubeconfig: Kubeconfig,
    context: Option<&str>,
) -> Result<(kube::Config, Option<String>), Failure> {
    block_on(load_config_async(kubeconfig, context))?
}

/// The client configuration of `context` (or the current context) of `kubeconfig`, and
/// the context's name: everything read from a kubeconfig before a client is built (no
/// credential plugin runs here: [`Resolved::connect`] runs it).
///
/// # Errors
/// [`Reason::BadKubeconfig`] when the context or its cluster is missing or unusable.
async fn load_config_async(
    mut kubeconfig: Kubeconfig,
    context: Option<&str>,
) -> Result<(kube::Config, Option<String>), Failure> {
    quiet_plugins(&mut kubeconfig);
    let current = context
        .map(str::to_string)
        .or_else(|| kubeconfig.current_context.clone());
    let options = KubeConfigOptions {
        context: current.clone(),
        ..Default::default()
    };
    let proxy_url = current.as_deref().and_then(|name| {
        let context = kubeconfig.contexts.iter().find(|c| c.name == name)?;
        let cluster = &context.context.as_ref()?.cluster;
        let cluster = kubeconfig.clusters.iter().find(|c| &c.name == cluster)?;
        cluster.cluster.as_ref()?.proxy_url.clone()
    });
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(|e| Failure::new(Reason::BadKubeconfig, Step::Connect, e.to_string()))?;
    config.proxy_url = proxy::choose(
        proxy_url.as_deref(),
        &config.cluster_url,
        crate::util::env::var,
    )
    .map_err(|m| Failure::new(Reason::BadKubeconfig, Step::Connect, m))?;
    Ok((config, current))
}

/// Exec credential plugins get no terminal when clinv has none on stdin (CI, the agent,
/// a pipe): kube then captures their stderr instead of passing it through to clinv's, so
/// what a failing plugin writes reaches no output ([`crate::util::redact::detail`] cuts
/// it from the failure). `interactiveMode: Always` is kept.
fn quiet_plugins(kubeconfig: &mut Kubeconfig) {
    use kube::config::ExecInteractiveMode;
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        return;
    }
    let plugins = kubeconfig
        .auth_infos
        .iter_mut()
        .filter_map(|a| a.auth_info.as_mut()?.exec.as_mut());
    for exec in plugins {
        if exec.interactive_mode != Some(ExecInteractiveMode::Always) {
            exec.interactive_mode = Some(ExecInteractiveMode::Never);
        }
    }
}

/// What is left of `opts`' deadline for a client started at `started`.
fn remaining(opts: &Options, started: Instant) -> Duration {
    let own = opts.deadline.saturating_sub(started.elapsed());
    match opts.until {
        Some(until) => own.min(until.saturating_duration_since(Instant::now())),
        None => own,
    }
}

/// A kubeconfig read and its context chosen, before anything runs or is sent.
///
/// A kubeconfig read and its context chosen: the client configuration and where it
/// points (the [`Target`] a snapshot records), known before anything runs or is sent —
/// the exec credential plugin runs in [`Resolved::connect`].
pub struct Resolved {
    config: kube::Config,
    pub target: Target,
}

impl Resolved {
    /// The context `context` (or the current context) of `kubeconfig`.
    ///
    /// # Errors
    /// As [`load_config_async`].
    pub fn load(kubeconfig: Kubeconfig, context: Option<&str>) -> Result<Resolved, Failure> {
        let (config, current) = load_config(kubeconfig, context)?;
        let target = Target::of(&config, current);
        Ok(Resolved { config, target })
    }

    /// Runs the exec credential plugin, if any, under `opts`' deadline and builds the
    /// client.
    ///
    /// # Errors
    /// [`Reason::BadKubeconfig`] when the credentials are unusable (a failing plugin);
    /// [`Reason::Unreachable`] for a plugin that did not answer in time.
    pub fn connect(self, opts: Options) -> Result<Cluster, Failure> {
        // The client's buffer task starts on the process's runtime.
        block_on(async { Cluster::from_config(self.config, self.target, opts) })?
    }

    /// Where a request's first byte goes — the proxy that carries it, else the API
    /// server — as host and port (`None`: the URL names no host).
    pub fn endpoint(&self) -> Option<(String, u16)> {
        let uri = self
            .config
            .proxy_url
            .as_ref()
            .unwrap_or(&self.config.cluster_url);
        let host = uri.host()?.trim_start_matches('[').trim_end_matches(']');
        let default = if uri.scheme_str() == Some("http") {
            80
        } else {
            443
        };
        Some((host.to_string(), uri.port_u16().unwrap_or(default)))
    }
}

impl Target {
    /// The server URL (without a trailing `/`) and context a configuration points at.
    pub fn of(config: &kube::Config, context: Option<String>) -> Target {
        let server = crate::util::redact::url(config.cluster_url.to_string().trim_end_matches('/'));
        Target {
            server,
            context,
            kubeconfig: Vec::new(),
        }
    }
}

impl Cluster {
    /// Builds a client from the pod's service account (`KUBERNETES_SERVICE_HOST` and the
    /// token and CA mounted under `/var/run/secrets/kubernetes.io/serviceaccount`).
    /// `HTTPS_PROXY`/`NO_PROXY` are honoured as in kubeconfig mode (a pod behind an
    /// egress proxy lists the service address in `NO_PROXY`, as for any client).
    ///
    /// # Errors
    /// [`Reason::BadKubeconfig`] when the in-cluster environment is incomplete or a
    /// proxy variable is not a URL.
    pub fn connect_in_cluster(opts: Options) -> Result<Cluster, Failure> {
        // The client's buffer task starts on the process's runtime.
        block_on(async { Cluster::in_cluster(opts) })?
    }

    fn in_cluster(opts: Options) -> Result<Cluster, Failure> {
        let bad = |m: String| Failure::new(Reason::BadKubeconfig, Step::Connect, m);
        let mut config =
            kube::Config::incluster().map_err(|e| bad(format!("in-cluster configuration: {e}")))?;
        config.proxy_url =
            proxy::choose(None, &config.cluster_url, crate::util::env::var).map_err(bad)?;
        let target = Target::of(&config, None);
        Cluster::from_config(config, target, opts)
    }

    /// Runs the exec credential plugin, if any, within the deadline (it counts against
    /// it), then builds the client: kube runs nothing more.
    fn from_config(
        mut config: kube::Config,
        target: Target,
        opts: Options,
    ) -> Result<Cluster, Failure> {
        let bad = |e: String| Failure::new(Reason::BadKubeconfig, Step::Connect, e);
        let started = Instant::now();
        plugin::resolve(&mut config.auth_info, remaining(&opts, started))?;
        config.connect_timeout = Some(opts.probe);
        config.read_timeout = Some(opts.deadline);
        config.write_timeout = Some(opts.deadline);
        config.default_retry = false;
        let client = kube::Client::try_from(config).map_err(|e| bad(e.to_string()))?;
        Ok(Cluster {
            client,
            target,
            opts,
            started,
            requests: std::cell::Cell::new(0),
            trace: Default::default(),
        })
    }

    fn remaining(&self) -> Duration {
        remaining(&self.opts, self.started)
    }

    /// Sends one request within `budget`; returns the status code and the JSON body.
    async fn send(
        &self,
        req: http::Request<Vec<u8>>,
        step: Step,
        budget: Duration,
    ) -> Result<(u16, Value), Failure> {
        self.send_limited(req, step, budget, MAX_BODY).await
    }

    /// [`Cluster::send`] with its own bound on the response body.
    async fn send_limited(
        &self,
        req: http::Request<Vec<u8>>,
        step: Step,
        budget: Duration,
        max_body: usize,
    ) -> Result<(u16, Value), Failure> {
        self.requests.set(self.requests.get() + 1);
        let server_deadline = server_deadline(budget);
        let req = with_server_deadline(req, server_deadline);
        let line = format!("{} {}", req.method(), req.uri());
        let sent = Instant::now();
        let call = async {
            let res = self.client.send(req.map(kube::client::Body::from)).await?;
            let status = res.status().as_u16();
            let body = http_body_util::Limited::new(res.into_body(), max_body)
                .collect()
                .await
                .map_err(kube::Error::Service)?
                .to_bytes();
            Ok::<_, kube::Error>((status, body))
        };
        let result = tokio::time::timeout(budget, call).await;
        let took = sent.elapsed().as_secs_f64() * 1000.0;
        let outcome = match &result {
            Ok(Ok((status, _))) => status.to_string(),
            Ok(Err(_)) => "transport error".into(),
            Err(_) => "timeout".into(),
        };
        self.trace
            .borrow_mut()
            .push(format!("api: {line} → {outcome} ({took:.1} ms)"));
        let (status, body) = match result {
            Err(_) => {
                let detail = format!("no answer within {:.1}s", budget.as_secs_f64());
                return Err(Failure::new(Reason::Unreachable, step, detail));
            }
            // The server closes the connection when its own timeout fires after the
            // handler has begun answering (the apiserver's timeout filter aborts then):
            // it was reached and gave up, as a 504 would say.
            Ok(Err(e))
                if closed_mid_answer(&e)
                    && server_deadline.is_some_and(|d| sent.elapsed() >= d) =>
            {
                let detail = format!(
                    "no answer within its {:.2}s request timeout (it closed the connection)",
                    server_deadline.unwrap_or_default().as_secs_f64()
                );
                return Err(Failure::new(Reason::ServerError, step, detail));
            }
            Ok(Err(e)) => {
                let detail = transport(&e, self.opts.probe);
                let reason = if untrusted_certificate(&detail) {
                    Reason::TlsIdentity
                } else {
                    Reason::Unreachable
                };
                return Err(Failure::new(reason, step, detail));
            }
            Ok(Ok(r)) => r,
        };
        let value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if (200..300).contains(&status) {
            if !value.is_object() {
                let detail = format!("HTTP {status} with a body that is not a Kubernetes object");
                return Err(Failure::new(Reason::ServerError, step, detail));
            }
            return Ok((status, value));
        }
        Err(classify(status, &value, step))
    }

    /// The live inventory (`None` when the CR or its CRD does not exist). This is the
    /// probe: it runs within the probe budget.
    ///
    /// # Errors
    /// Any classified failure.
    async fn get_inventory_async(&self) -> Result<Option<Value>, Failure> {
        match self.read_inventory_async().await? {
            Live::Found(v) => Ok(Some(v)),
            Live::NoCrd | Live::NoObject => Ok(None),
        }
    }

    /// The live inventory, telling a missing CRD from a missing object (the agent says
    /// which). Runs within the probe budget.
    ///
    /// # Errors
    /// Any classified failure other than NotFound.
    async fn read_inventory_async(&self) -> Result<Live, Failure> {
        let req = Request::new(CR_COLLECTION)
            .get(inventory::NAME, &Default::default())
            .map_err(|e| Failure::new(Reason::BadKubeconfig, Step::Probe, e.to_string()))?;
        let budget = self.opts.probe.min(self.remaining());
        match self.send(req, Step::Probe, budget).await {
            Ok((_, v)) => Ok(Live::Found(v)),
            Err(f) if f.not_found() && f.missing_object => Ok(Live::NoObject),
            Err(f) if f.not_found() => Ok(Live::NoCrd),
            Err(f) => Err(f),
        }
    }

    /// Helm release records (Secrets of type `helm.sh/release.v1` labelled `owner=helm`
    /// with status `deployed` or `failed`, as `helm list` shows), decoded in memory to
    /// name, version and status. Records that do not decode are counted, not returned.
    /// Paged; stops after a bounded number of pages.
    ///
    /// # Errors
    /// Any classified failure (403 when RBAC does not allow listing Secrets).
    async fn helm_releases_async(&self) -> Result<HelmReleases, Failure> {
        let mut out = HelmReleases::default();
        let mut token: Option<String> = None;
        for _ in 0..MAX_SECRET_PAGES {
            let mut params = kube::api::ListParams::default()
                .labels("owner=helm,status in (deployed,failed)")
                .fields("type=helm.sh/release.v1")
                .limit(SECRETS_PAGE);
            if let Some(t) = &token {
                params = params.continue_token(t);
            }
            let req = Request::new("/api/v1/secrets")
                .list(&params)
                .map_err(|e| Failure::new(Reason::Rejected, Step::Secrets, e.to_string()))?;
            let (_, page) = self
                .send_limited(req, Step::Secrets, self.remaining(), MAX_SECRETS_BODY)
                .await?;
            for item in page["items"].as_array().into_iter().flatten() {
                let namespace = item
                    .pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let data = item.pointer("/data/release").and_then(Value::as_str);
                match data.map(|d| crate::catalog::helm::decode(namespace, d)) {
                    Some(Ok(release)) => out.releases.push(release),
                    Some(Err(_)) | None => out.undecodable += 1,
                }
            }
            token = page
                .pointer("/metadata/continue")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_string);
            if token.is_none() {
                return Ok(out);
            }
        }
        out.truncated = true;
        Ok(out)
    }

    /// JSON merge patch of the inventory's status subresource, field manager
    /// `clinv-agent`. `status` is the value of the `status` key; nothing else is sent.
    ///
    /// # Errors
    /// Any classified failure (404 when the object or its CRD is gone).
    async fn patch_status_async(&self, status: &Value) -> Result<Value, Failure> {
        let params = PatchParams {
            field_manager: Some(AGENT_FIELD_MANAGER.into()),
            ..Default::default()
        };
        let body = serde_json::json!({ "status": status });
        let req = Request::new(CR_COLLECTION)
            .patch_subresource("status", inventory::NAME, &params, &Patch::Merge(&body))
            .map_err(|e| Failure::new(Reason::Rejected, Step::Status, e.to_string()))?;
        let (_, after) = self.send(req, Step::Status, self.remaining()).await?;
        Ok(after)
    }

    /// Server-side applies the CRD; returns whether it was created and whether the
    /// response already reports it Established.
    async fn apply_crd(&self) -> Result<(Change, bool), Failure> {
        let params = self.params();
        let crd = crd::definition();
        let req = Request::new(CRD_COLLECTION)
            .patch(crd::NAME, &params, &Patch::Apply(&crd))
            .map_err(|e| Failure::new(Reason::Rejected, Step::Crd, e.to_string()))?;
        let (status, body) = self.send(req, Step::Crd, self.remaining()).await?;
        let change = if status == 201 {
            Change::Created
        } else {
            Change::Configured
        };
        Ok((change, established(&body)))
    }

    /// Polls the CRD until it is Established or the deadline passes.
    async fn wait_established(&self) -> Result<(), Failure> {
        let mut delays = POLL.until(Some(Instant::now() + self.remaining()));
        loop {
            let req = Request::new(CRD_COLLECTION)
                .get(crd::NAME, &Default::default())
                .map_err(|e| Failure::new(Reason::Rejected, Step::Established, e.to_string()))?;
            let (_, body) = self.send(req, Step::Established, self.remaining()).await?;
            if established(&body) {
                return Ok(());
            }
            let Some(delay) = delays.next() else {
                let detail = "the CRD did not become Established before the deadline";
                return Err(Failure::new(Reason::ServerError, Step::Established, detail));
            };
            tokio::time::sleep(delay).await;
        }
    }

    /// Server-side applies the CR, retrying a NotFound briefly (the CRD can be
    /// Established a moment before its endpoint serves).
    async fn apply_cr(
        &self,
        cr: &ClusterInventory,
        precondition: Option<&str>,
    ) -> Result<(u16, Value), Failure> {
        let params = self.params();
        let mut body = serde_json::to_value(cr).unwrap_or(Value::Null);
        if let (Some(rv), Some(meta)) = (
            precondition,
            body.get_mut("metadata").and_then(Value::as_object_mut),
        ) {
            meta.insert("resourceVersion".into(), rv.into());
        }
        let retry_until = Instant::now() + NOT_FOUND_RETRY.min(self.remaining());
        let mut delays = POLL.until(Some(retry_until));
        loop {
            let req = Request::new(CR_COLLECTION)
                .patch(inventory::NAME, &params, &Patch::Apply(&body))
                .map_err(|e| Failure::new(Reason::Rejected, Step::Cr, e.to_string()))?;
            match self.send(req, Step::Cr, self.remaining()).await {
                Err(f) if f.not_found() => match delays.next() {
                    Some(delay) => tokio::time::sleep(delay).await,
                    None => return Err(f),
                },
                other => return other,
            }
        }
    }

    fn params(&self) -> PatchParams {
        let mut params = PatchParams::apply(FIELD_MANAGER);
        params.force = self.opts.force;
        params.dry_run = self.opts.dry_run;
        params
    }

    /// The publish sequence: probe, CRD, (wait), CR — last writer wins, as with `lo`.
    ///
    /// # Errors
    /// The first classified failure; nothing after it is sent.
    async fn publish_async(&self, cr: &ClusterInventory) -> Result<Applied, Failure> {
        match self.deliver(cr, false).await? {
            Delivery::Applied(a) => Ok(a),
            // Not produced without the guard; kept total instead of panicking.
            Delivery::Stale { live_rendered_at } => Err(Failure::new(
                Reason::Conflict,
                Step::Cr,
                format!("the live inventory was rendered later ({live_rendered_at})"),
            )),
        }
    }

    /// Delivers a queued inventory: like [`Cluster::publish`], but never over a live
    /// object rendered later (the stale guard), and with the live `resourceVersion` as
    /// an apply precondition so a concurrent writer is noticed and re-checked.
    ///
    /// # Errors
    /// The first classified failure.
    async fn replay_async(&self, cr: &ClusterInventory) -> Result<Delivery, Failure> {
        self.deliver(cr, true).await
    }

    /// `replay --allow-older`: delivers a queued inventory even over a live object
    /// rendered later (no stale guard).
    ///
    /// # Errors
    /// The first classified failure.
    async fn replay_allowing_older_async(
        &self,
        cr: &ClusterInventory,
    ) -> Result<Delivery, Failure> {
        self.deliver(cr, false).await
    }

    /// Why `cr` is not written over the live object `before`, if it is not.
    fn refusal(
        &self,
        before: Option<&Value>,
        cr: &ClusterInventory,
        guard: bool,
    ) -> Option<Result<Delivery, Failure>> {
        // Another domain's inventory is never overwritten (by a publish either: two
        // domains whose kubeconfigs reach one server), nor compared by age.
        if !self.opts.take_over
            && let Some(detail) = before.and_then(|l| other_domain(l, cr))
        {
            return Some(Err(Failure::new(
                Reason::DomainMismatch,
                Step::Probe,
                detail,
            )));
        }
        // Render times are compared within one domain only: another domain's inventory
        // (taken over) says nothing about how old this one is.
        if guard
            && let Some(live_at) = before
                .filter(|l| other_domain(l, cr).is_none())
                .and_then(|l| newer_rendered_at(l, cr))
        {
            return Some(Ok(Delivery::Stale {
                live_rendered_at: live_at,
            }));
        }
        // A live object a GitOps controller manages is changed through its
        // repository: an apply would fight the controller (409 on its fields, or a
        // revert at its next sync). --force-conflicts takes it over all the same.
        if !self.opts.force
            && let Some(live) = before.filter(|l| !same_content(l, cr))
            && let Some(owner) = gitops_owner(live)
        {
            return Some(Err(Failure::new(Reason::GitopsManaged, Step::Cr, owner)));
        }
        None
    }

    async fn deliver(&self, cr: &ClusterInventory, guard: bool) -> Result<Delivery, Failure> {
        let mut crd_change = None;
        let mut meanwhile = None;
        for _attempt in 0..3 {
            let before = self.get_inventory_async().await?;
            if let Some(refused) = self.refusal(before.as_ref(), cr, guard) {
                return refused;
            }
            let crd = match crd_change {
                Some(c) => c,
                None => {
                    let (change, ready) = self.apply_crd().await?;
                    if !ready && !self.opts.dry_run {
                        self.wait_established().await?;
                    }
                    crd_change = Some(change);
                    change
                }
            };
            if let Some(live) = before.as_ref().filter(|live| same_content(live, cr)) {
                // Only renderedAt would change: keep the live object (and its renderedAt).
                return Ok(Delivery::Applied(Applied {
                    crd,
                    cr: Change::Unchanged,
                    before: Some(live.clone()),
                    after: live.clone(),
                    requests: self.requests.get(),
                }));
            }
            let precondition = precondition(before.as_ref(), guard);
            let (status, after) = if self.opts.dry_run && crd == Change::Created {
                // A dry-run CRD was not stored, so the CR cannot be dry-run against it.
                (201, serde_json::to_value(cr).unwrap_or(Value::Null))
            } else {
                match self.apply_cr(cr, precondition).await {
                    Err(f) if precondition.is_some() && f.modified_meanwhile() => {
                        meanwhile = Some(f);
                        continue;
                    }
                    other => other?,
                }
            };
            let cr_change = match &before {
                None => Change::Created,
                Some(_) if status == 201 => Change::Created,
                // A dry run does not bump the resourceVersion; compare what would be stored.
                Some(b) if self.opts.dry_run => {
                    if b.get("spec") == after.get("spec") {
                        Change::Unchanged
                    } else {
                        Change::Configured
                    }
                }
                Some(b) if resource_version(b) == resource_version(&after) => Change::Unchanged,
                Some(_) => Change::Configured,
            };
            return Ok(Delivery::Applied(Applied {
                crd,
                cr: cr_change,
                before,
                after,
                requests: self.requests.get(),
            }));
        }
        let kept = "the live ClusterInventory kept changing while it was being replaced";
        Err(match meanwhile {
            Some(last) => Failure {
                detail: format!("{kept} (last: {})", last.detail),
                ..last
            },
            None => Failure::new(Reason::Conflict, Step::Cr, kept),
        })
    }

    /// The request log (method, path, status, time), for `-v`.
    pub fn trace(&self) -> Vec<String> {
        self.trace.borrow().clone()
    }
}

/// The synchronous face of [`Cluster`]: each call runs on the process's runtime
/// ([`block_on`]), so async never leaves this module.
impl Cluster {
    /// The live inventory (`None` when the CR or its CRD does not exist); the probe.
    ///
    /// # Errors
    /// Any classified failure.
    pub fn get_inventory(&self) -> Result<Option<Value>, Failure> {
        block_on(self.get_inventory_async())?
    }

    /// The live inventory, telling a missing CRD from a missing object.
    ///
    /// # Errors
    /// Any classified failure other than NotFound.
    pub fn read_inventory(&self) -> Result<Live, Failure> {
        block_on(self.read_inventory_async())?
    }

    /// Helm release records, decoded to name, version and status.
    ///
    /// # Errors
    /// Any classified failure (403 when RBAC does not allow listing Secrets).
    pub fn helm_releases(&self) -> Result<HelmReleases, Failure> {
        block_on(self.helm_releases_async())?
    }

    /// JSON merge patch of the inventory's status subresource.
    ///
    /// # Errors
    /// Any classified failure (404 when the object or its CRD is gone).
    pub fn patch_status(&self, status: &Value) -> Result<Value, Failure> {
        block_on(self.patch_status_async(status))?
    }

    /// The publish sequence: probe, CRD, (wait), CR — last writer wins, as with `lo`.
    ///
    /// # Errors
    /// The first classified failure; nothing after it is sent.
    pub fn publish(&self, cr: &ClusterInventory) -> Result<Applied, Failure> {
        block_on(self.publish_async(cr))?
    }

    /// Delivers a queued inventory, never over a live object rendered later.
    ///
    /// # Errors
    /// The first classified failure.
    pub fn replay(&self, cr: &ClusterInventory) -> Result<Delivery, Failure> {
        block_on(self.replay_async(cr))?
    }

    /// `replay --allow-older`: delivers a queued inventory even over a newer live one.
    ///
    /// # Errors
    /// The first classified failure.
    pub fn replay_allowing_older(&self, cr: &ClusterInventory) -> Result<Delivery, Failure> {
        block_on(self.replay_allowing_older_async(cr))?
    }
}

/// Starts the process's runtime ([`crate::util::runtime`]). Flows call it first, so a
/// local failure is reported as one, not as the cluster's.
///
/// # Errors
/// [`crate::Error::Runtime`]: the process cannot get the resources.
pub fn ready() -> crate::Result<()> {
    crate::util::runtime::get()
        .map(|_| ())
        .map_err(crate::Error::Runtime)
}

/// Runs `future` to completion on the process's runtime, from this thread.
pub(super) fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, Failure> {
    let runtime = crate::util::runtime::get().map_err(|e| {
        Failure::new(
            Reason::BadKubeconfig,
            Step::Connect,
            format!("cannot start the async runtime: {e}"),
        )
    })?;
    Ok(runtime.block_on(future))
}

/// Who manages the live object, when a GitOps controller does.
///
/// Who manages the live object when a GitOps controller does, as "Flux Kustomization
/// NS/NAME" or "Argo CD Application NAME": Flux's `kustomize.toolkit.fluxcd.io/name` and
/// `/namespace` labels, or its `kustomize-controller` field manager; Argo CD's
/// `argocd.argoproj.io/tracking-id` annotation or `app.kubernetes.io/instance` label.
pub fn gitops_owner(live: &Value) -> Option<String> {
    let meta = live.get("metadata")?;
    let label = |k: &str| {
        meta.get("labels")
            .and_then(|l| l.get(k))
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    };
    let annotation = |k: &str| {
        meta.get("annotations")
            .and_then(|l| l.get(k))
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    };
    let by_flux_manager = meta
        .get("managedFields")
        .and_then(Value::as_array)
        .is_some_and(|m| {
            m.iter()
                .any(|f| f.get("manager").and_then(Value::as_str) == Some("kustomize-controller"))
        });
    let owner = if let Some(name) = label("kustomize.toolkit.fluxcd.io/name") {
        let ns = label("kustomize.toolkit.fluxcd.io/namespace").unwrap_or("flux-system");
        format!("Flux Kustomization {ns}/{name}")
    } else if by_flux_manager {
        "Flux (field manager kustomize-controller)".to_string()
    } else if let Some(id) = annotation("argocd.argoproj.io/tracking-id") {
        // "<app>:<group>/<kind>:<namespace>/<name>"
        format!("Argo CD Application {}", id.split(':').next().unwrap_or(id))
    } else if let Some(app) = label("app.kubernetes.io/instance") {
        format!("Argo CD Application {app}")
    } else {
        return None;
    };
    // Label values are the cluster's: one line, no control characters.
    Some(crate::util::redact::escape_line(&owner))
}

/// True when the live object carries `cr`'s domain label and spec, `renderedAt` aside.
pub fn same_content(live: &Value, cr: &ClusterInventory) -> bool {
    let Ok(mut want) = serde_json::to_value(&cr.spec) else {
        return false;
    };
    let Some(mut have) = live.get("spec").cloned() else {
        return false;
    };
    for v in [&mut want, &mut have] {
        if let Some(map) = v.as_object_mut() {
            map.remove("renderedAt");
        }
    }
    let label = |v: &Value| v.pointer("/metadata/labels/lok8s.dev~1domain").cloned();
    want == have
        && label(live)
            == cr
                .metadata
                .labels
                .get(inventory::DOMAIN_LABEL)
                .map(|d| Value::from(d.as_str()))
}

/// The `resourceVersion` an apply over `before` is conditional on.
///
/// The object checked is the one written: a writer in between (another domain's publish)
/// makes the apply fail, and the checks run again. Guarded, an absent object is created
/// only while it is absent: another writer's newer inventory created meanwhile is
/// checked, never written over.
fn precondition(before: Option<&Value>, guard: bool) -> Option<&str> {
    match before {
        Some(live) => resource_version(live),
        None if guard => Some(ABSENT),
        None => None,
    }
}

/// The precondition of a guarded create: no object holds it (etcd's first write is
/// revision 2), so an apply that finds an object fails with a 409 and the checks run
/// again, while one that finds none creates it (a create ignores the value).
const ABSENT: &str = "1";

fn resource_version(v: &Value) -> Option<&str> {
    v.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
}

fn established(crd: &Value) -> bool {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        })
}

/// Maps an HTTP error status and its `Status` body to a failure.
fn classify(status: u16, body: &Value, step: Step) -> Failure {
    let parsed: Option<Status> = serde_json::from_value(body.clone()).ok();
    let message = parsed
        .as_ref()
        .map(|s| s.message.clone())
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| "no Status in the response".into());
    let details_name = parsed
        .as_ref()
        .and_then(|s| s.details.as_ref())
        .map(|d| d.name.clone())
        .unwrap_or_default();
    let causes: Vec<String> = parsed
        .and_then(|s| s.details)
        .map(|d| {
            d.causes
                .into_iter()
                .map(|c| format!("{}: {}", c.field, c.message))
                .collect()
        })
        .unwrap_or_default();
    let mut detail = format!("{status} {message}");
    for cause in causes.iter().filter(|c| !message.contains(c.as_str())) {
        detail.push_str("\n  ");
        detail.push_str(cause);
    }
    let reason = match status {
        401 => Reason::Unauthorized,
        403 => Reason::Forbidden,
        409 => Reason::Conflict,
        500..=599 => Reason::ServerError,
        _ => Reason::Rejected,
    };
    Failure {
        code: Some(status),
        missing_object: status == 404 && !details_name.is_empty(),
        ..Failure::new(reason, step, detail)
    }
}

/// The deadline clinv asks the API server to keep (`?timeout=`, as kubectl's
/// `--request-timeout`): ¾ of the request's budget, so a server that is up but cannot
/// reach etcd answers with its own 5xx inside the budget, which tells "server error" from
/// "unreachable". `None` when the budget is too short to split.
fn server_deadline(budget: Duration) -> Option<Duration> {
    let deadline = budget * 3 / 4;
    (deadline >= Duration::from_millis(500)).then_some(deadline)
}

fn with_server_deadline(
    req: http::Request<Vec<u8>>,
    deadline: Option<Duration>,
) -> http::Request<Vec<u8>> {
    let Some(deadline) = deadline else {
        return req;
    };
    let (mut parts, body) = req.into_parts();
    let joiner = if parts.uri.query().is_some() {
        '&'
    } else {
        '?'
    };
    let uri = format!("{}{joiner}timeout={}ms", parts.uri, deadline.as_millis());
    if let Ok(uri) = uri.parse() {
        parts.uri = uri;
    }
    http::Request::from_parts(parts, body)
}

/// The server closed the connection after the request was sent, before a whole answer.
fn closed_mid_answer(err: &kube::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(s) = source {
        if s.downcast_ref::<hyper::Error>()
            .is_some_and(hyper::Error::is_incomplete_message)
        {
            return true;
        }
        source = s.source();
    }
    false
}

/// A transport failure that is the server's certificate not verifying (an unknown CA,
/// a name it is not valid for, expired): the server answered, but is not the one the
/// kubeconfig trusts — not an unreachable cluster.
fn untrusted_certificate(detail: &str) -> bool {
    ["invalid peer certificate", "certificate verify failed"]
        .iter()
        .any(|m| detail.contains(m))
}

/// A transport error as one line: the innermost causes carry the useful part
/// ("Connection refused", "invalid peer certificate: …").
fn transport(err: &kube::Error, connect_budget: Duration) -> String {
    let mut chain = vec![err.to_string()];
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        chain.push(s.to_string());
        source = s.source();
    }
    if chain.iter().any(|c| c.contains("deadline has elapsed")) {
        return format!(
            "no answer within {:.1}s (connecting / TLS handshake)",
            connect_budget.as_secs_f64()
        );
    }
    let last = chain.last().cloned().unwrap_or_default();
    match chain.iter().rev().nth(1) {
        Some(outer) if !outer.contains(&last) && chain.len() > 2 => format!("{outer}: {last}"),
        _ => last,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CRD and CR polls wait as they did by hand: 50, 100, 200, 400, 500, 500 ms,
    /// and no poll starts at or after the deadline (5 s: 50+100+200+400 then 500 ms
    /// steps, the last one ending before 5 s).
    #[test]
    fn the_polls_wait_as_before_and_stop_before_the_deadline() {
        use crate::util::backoff::Rng;
        let ms = Duration::from_millis;
        let t0 = Instant::now();
        let got = POLL
            .seeded(Some(t0 + NOT_FOUND_RETRY), Rng::seeded(0))
            .walk(t0);
        assert_eq!(got[..6], [50, 100, 200, 400, 500, 500].map(ms));
        assert!(got[4..].iter().all(|d| *d == ms(500)));
        let waited: Duration = got.iter().sum();
        assert_eq!(waited, ms(4750), "the next 500 ms would end at 5.25 s");
    }

    #[test]
    fn the_server_is_asked_to_give_up_first() {
        let req = |uri: &str| http::Request::get(uri).body(Vec::new()).unwrap();
        let uri = |r: &str, budget| {
            with_server_deadline(req(r), server_deadline(budget))
                .uri()
                .to_string()
        };
        assert_eq!(
            uri("/apis/x/cluster?fieldManager=lok8s", Duration::from_secs(3)),
            "/apis/x/cluster?fieldManager=lok8s&timeout=2250ms"
        );
        assert_eq!(
            uri("/apis/x/cluster", Duration::from_secs(10)),
            "/apis/x/cluster?timeout=7500ms"
        );
        // Too short a budget to split: the client's own timer alone.
        assert_eq!(
            uri("/apis/x/cluster", Duration::from_millis(600)),
            "/apis/x/cluster"
        );
    }

    #[test]
    fn statuses_are_classified() {
        let body = serde_json::json!({"kind": "Status", "message": "Apply failed with 1 conflict: conflict with \"other\": .spec.versions", "reason": "Conflict", "code": 409});
        let f = classify(409, &body, Step::Crd);
        assert_eq!(f.reason, Reason::Conflict);
        assert!(f.detail.contains("conflict with \"other\""));
        for (code, step, reason) in [
            (401, Step::Probe, Reason::Unauthorized),
            (403, Step::Probe, Reason::Forbidden),
            (503, Step::Probe, Reason::ServerError),
            (422, Step::Cr, Reason::Rejected),
        ] {
            assert_eq!(classify(code, &Value::Null, step).reason, reason, "{code}");
        }
        assert!(classify(404, &Value::Null, Step::Cr).not_found());
    }

    #[test]
    fn credentials_a_server_echoes_are_not_in_the_detail() {
        // Issue #48, finding 12: a 401 whose message echoed the Authorization header was
        // stored verbatim (journal, export, logs).
        let message = "Unauthorized: got Authorization: Bearer abc.def.ghi; \"authorization\": \"Basic dXNlcjpzM2NyZXQ=\"";
        let cause = "header: bearer tok-s3cret rejected";
        let body = serde_json::json!({"kind": "Status", "message": message, "reason": "Unauthorized", "code": 401,
            "details": {"causes": [{"field": "header", "message": cause}]}});
        let f = classify(401, &body, Step::Probe);
        assert_eq!(f.reason, Reason::Unauthorized);
        for secret in ["abc.def.ghi", "dXNlcjpzM2NyZXQ=", "tok-s3cret"] {
            assert!(!f.detail.contains(secret), "{secret}: {}", f.detail);
        }
        assert!(
            f.detail
                .starts_with("401 Unauthorized: got Authorization: Bearer …"),
            "{}",
            f.detail
        );
    }

    #[test]
    fn gitops_owners_are_named() {
        let obj = |meta: Value| serde_json::json!({ "metadata": meta });
        let flux = obj(serde_json::json!({"labels": {
            "kustomize.toolkit.fluxcd.io/name": "inventory",
            "kustomize.toolkit.fluxcd.io/namespace": "flux-system"}}));
        assert_eq!(
            gitops_owner(&flux).as_deref(),
            Some("Flux Kustomization flux-system/inventory")
        );
        let manager = obj(serde_json::json!({"managedFields": [
            {"manager": "lok8s"}, {"manager": "kustomize-controller"}]}));
        assert_eq!(
            gitops_owner(&manager).as_deref(),
            Some("Flux (field manager kustomize-controller)")
        );
        let argo = obj(serde_json::json!({"annotations": {
            "argocd.argoproj.io/tracking-id": "inv-prod:lok8s.dev/ClusterInventory:/cluster"}}));
        assert_eq!(
            gitops_owner(&argo).as_deref(),
            Some("Argo CD Application inv-prod")
        );
        let instance = obj(serde_json::json!({"labels": {"app.kubernetes.io/instance": "inv"}}));
        assert_eq!(
            gitops_owner(&instance).as_deref(),
            Some("Argo CD Application inv")
        );
        let plain = obj(serde_json::json!({"labels": {"lok8s.dev/domain": "x"},
            "managedFields": [{"manager": "lok8s"}]}));
        assert_eq!(gitops_owner(&plain), None);
    }

    #[test]
    fn only_the_same_domain_label_is_the_same_domain() {
        let cr = crate::inventory::parse::inventory_from_value(serde_json::json!({
            "apiVersion": inventory::API_VERSION, "kind": inventory::KIND,
            "metadata": {"name": "cluster", "labels": {"lok8s.dev/domain": "prod"}},
            "spec": {"lok8sVersion": "1", "kind": "lo", "specHash": "h", "renderedAt": "2026-01-01T00:00:00Z"}
        }))
        .unwrap();
        let live = |labels: Value| serde_json::json!({"metadata": {"labels": labels}});
        assert_eq!(
            other_domain(&live(serde_json::json!({"lok8s.dev/domain": "prod"})), &cr),
            None
        );
        let other = other_domain(&live(serde_json::json!({"lok8s.dev/domain": "lab"})), &cr);
        assert!(other.unwrap().contains("belongs to domain lab"));
        let none = other_domain(&live(serde_json::json!({})), &cr);
        assert!(none.unwrap().contains("has no lok8s.dev/domain label"));
    }

    #[test]
    fn established_condition() {
        let yes = serde_json::json!({"status": {"conditions": [{"type": "NamesAccepted", "status": "True"}, {"type": "Established", "status": "True"}]}});
        let no = serde_json::json!({"status": {"conditions": [{"type": "Established", "status": "False"}]}});
        assert!(established(&yes));
        assert!(!established(&no));
        assert!(!established(&Value::Null));
    }
}
