//! Issue 16, finding 7: dynamic completions (clap_complete's engine). The binary is run
//! the way the registration script runs it — `COMPLETE=bash clinv -- clinv WORDS…` with
//! `_CLAP_COMPLETE_INDEX` naming the word under the cursor — and the candidates are
//! checked: domains from the project and the store, snapshot ids and references from
//! the selected domain's store, each command's `-o` formats. A real bash sources the
//! script and runs its completion function.

use crate::selection::Fx;
use crate::support::*;
use std::path::Path;
use std::time::Duration;

/// The candidates for the last word of `words` (`clinv` first), one per line as the
/// bash script reads them (its IFS set to a newline here).
fn candidates(cmd: Clinv, words: &[&str]) -> Vec<String> {
    let run = asked(cmd, words);
    assert_eq!(run.code, 0, "{words:?}: {}", run.stderr);
    run.stdout
        .split('\n')
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

/// Runs one completion request and checks it is silent on stderr. (How fast it answers
/// is `scripts/bench.py completion`'s, on the release binary: a debug build on a loaded
/// machine measures nothing. That it takes no lock is checked below, without a clock.)
fn asked(cmd: Clinv, words: &[&str]) -> Run {
    let index = (words.len() - 1).to_string();
    let run = cmd
        .env("COMPLETE", "bash")
        .env("_CLAP_COMPLETE_INDEX", &index)
        .env("_CLAP_COMPLETE_COMP_TYPE", "9")
        .env("_CLAP_COMPLETE_SPACE", "true")
        .env("_CLAP_IFS", "\n")
        .run();
    assert!(run.stderr.is_empty(), "{words:?}: {}", run.stderr);
    run
}

/// `clinv -- WORDS` (the protocol's argument list) for `words`.
fn request(words: &[&str]) -> Vec<String> {
    let mut all = vec!["--".to_string()];
    all.extend(words.iter().map(|w| w.to_string()));
    all
}

fn in_project(fx: &Fx, words: &[&str]) -> Vec<String> {
    let args = request(words);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    candidates(fx.in_project(&args), words)
}

fn values(all: Vec<String>) -> Vec<String> {
    all.into_iter().filter(|c| !c.starts_with('-')).collect()
}

/// Ids of a domain's snapshots, newest first.
fn ids(fx: &Fx, domain: &str) -> Vec<String> {
    let run = fx
        .in_project(&["snapshots", "list", "-o", "json", "--domain", domain])
        .run()
        .success();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).unwrap();
    rows.iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

/// A snapshot-only domain: the store holds it, the project has no clusters/<d>/.
fn add_store_only_domain(fx: &Fx, domain: &str) {
    copy_dir(
        &fx.store().join("lab.acme.example"),
        &fx.store().join(domain),
    );
}

fn domains_come_from_the_project_and_the_store() {
    let fx = Fx::new();
    add_store_only_domain(&fx, "old.acme.example");
    let all = [
        "apps.acme.example",
        "edge.acme.example",
        "lab.acme.example",
        "old.acme.example",
        "prod.acme.example",
    ];
    // Every command that takes --domain, wherever the flag stands.
    for words in [
        &["clinv", "render", "--domain", ""][..],
        &["clinv", "addons", "--domain", ""],
        &["clinv", "publish", "--domain", ""],
        &["clinv", "status", "--domain", ""],
        &["clinv", "drift", "--domain", ""],
        &["clinv", "replay", "--domain", ""],
        &["clinv", "updates", "--domain", ""],
        &["clinv", "log", "--domain", ""],
        &["clinv", "report", "--domain", ""],
        &["clinv", "diff", "latest~1", "latest", "--domain", ""],
        &["clinv", "snapshots", "--domain", ""],
        &["clinv", "snapshots", "show", "--domain", ""],
        &["clinv", "-q", "render", "--root", ".", "--domain", ""],
    ] {
        assert_eq!(in_project(&fx, words), all, "{words:?}");
    }
    #[cfg(feature = "gitops")]
    assert_eq!(
        in_project(&fx, &["clinv", "commit", "--repo", "r", "--domain", ""]),
        all
    );
    // What is typed filters; --domain=VALUE keeps its flag.
    assert_eq!(
        in_project(&fx, &["clinv", "render", "--domain", "p"]),
        ["prod.acme.example"]
    );
    assert_eq!(
        in_project(&fx, &["clinv", "log", "--domain=o"]),
        ["--domain=old.acme.example"]
    );
    // fish (and zsh) show each candidate's help: where the domain is known.
    let words = ["clinv", "render", "--domain", ""];
    let run = fx
        .in_project(
            &request(&words)
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        )
        .env("COMPLETE", "fish")
        .run()
        .success();
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "apps.acme.example\tproject\nedge.acme.example\tproject\n\
         lab.acme.example\tproject, snapshots\nold.acme.example\tsnapshots\n\
         prod.acme.example\tproject, snapshots\n"
    );
    // Outside any project: the store's domains (named by --snapshots or CLINV_SNAPSHOTS).
    let store = fx.store();
    let store = store.to_str().unwrap();
    let words = ["clinv", "--snapshots", store, "log", "--domain", ""];
    let got = candidates(
        clinv(
            &request(&words)
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        )
        .env_remove("CLINV_SNAPSHOTS")
        .cwd(fx.away.path()),
        &words,
    );
    assert_eq!(
        got,
        ["lab.acme.example", "old.acme.example", "prod.acme.example"]
    );
    let words = ["clinv", "snapshots", "list", "--domain", ""];
    let got = candidates(
        clinv(
            &request(&words)
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        )
        .store(store)
        .cwd(fx.away.path()),
        &words,
    );
    assert_eq!(
        got,
        ["lab.acme.example", "old.acme.example", "prod.acme.example"]
    );
}

fn nothing_to_complete_is_silent() {
    let fx = Fx::new();
    let away = fx.away.path();
    let empty = tempfile::tempdir().unwrap();
    let empty = empty.path().to_str().unwrap();
    for words in [
        // No project, no store.
        &["clinv", "render", "--domain", ""][..],
        &["clinv", "snapshots", "show", ""],
        // A --root or --snapshots that names nothing: an error when run, nothing here.
        &["clinv", "--root", "/nonexistent", "render", "--domain", ""],
        &[
            "clinv",
            "--snapshots",
            "/nonexistent",
            "snapshots",
            "show",
            "",
        ],
        &["clinv", "--snapshots", empty, "log", "--domain", ""],
        // Nothing matches what is typed.
        &["clinv", "render", "--domain", "zzz"],
    ] {
        let args = request(words);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = asked(clinv(&args).env_remove("CLINV_SNAPSHOTS").cwd(away), words);
        let got: Vec<&str> = run.stdout.split('\n').filter(|c| !c.is_empty()).collect();
        assert!(got.iter().all(|c| c.starts_with('-')), "{words:?}: {got:?}");
    }
    // A misspelled domain in the project: no ids, no "did you mean" on the terminal.
    assert_eq!(
        values(in_project(
            &fx,
            &[
                "clinv",
                "snapshots",
                "show",
                "--domain",
                "prod.acme.exmple",
                ""
            ]
        )),
        Vec::<String>::new()
    );
}

fn snapshot_references_complete_from_the_selected_domain() {
    let fx = Fx::new();
    let prod = ids(&fx, "prod.acme.example");
    let lab = ids(&fx, "lab.acme.example");
    assert_eq!((prod.len(), lab.len()), (2, 1));
    // clusters/.active selects prod: latest, latest~1, then the ids newest first.
    let want: Vec<String> = ["latest", "latest~1"]
        .iter()
        .map(|s| s.to_string())
        .chain(prod.iter().cloned())
        .collect();
    assert_eq!(
        values(in_project(&fx, &["clinv", "snapshots", "show", ""])),
        want
    );
    #[cfg(feature = "gitops")]
    assert_eq!(
        in_project(&fx, &["clinv", "commit", "--repo", "r", "--snapshot", ""]),
        want
    );
    // --domain (before or after), DOMAIN_NAME.
    let lab_want = vec!["latest".to_string(), lab[0].clone()];
    for words in [
        &[
            "clinv",
            "snapshots",
            "--domain",
            "lab.acme.example",
            "show",
            "",
        ][..],
        &[
            "clinv",
            "snapshots",
            "show",
            "--domain=lab.acme.example",
            "",
        ],
    ] {
        assert_eq!(values(in_project(&fx, words)), lab_want, "{words:?}");
    }
    let words = ["clinv", "snapshots", "show", ""];
    let args = request(&words);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(
        values(candidates(
            fx.in_project(&args).env("DOMAIN_NAME", "lab.acme.example"),
            &words
        )),
        lab_want
    );
    // The word under the cursor need not be the last.
    let words = [
        "clinv",
        "snapshots",
        "show",
        "",
        "--domain",
        "lab.acme.example",
    ];
    let args = request(&words);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = fx
        .in_project(&args)
        .env("COMPLETE", "bash")
        .env("_CLAP_COMPLETE_INDEX", "3")
        .env("_CLAP_IFS", "\n")
        .run();
    assert_eq!(
        values(run.stdout.lines().map(str::to_string).collect()),
        lab_want
    );
    // fish shows what latest names.
    let words = ["clinv", "snapshots", "show", "latest~"];
    let run = fx
        .in_project(
            &request(&words)
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        )
        .env("COMPLETE", "fish")
        .run()
        .success();
    assert!(
        run.stdout.starts_with(&format!("latest~1\t{} 20", prod[1])),
        "{}",
        run.stdout
    );
    // A prefix, latest~.
    let prefix = &prod[1][..5];
    assert_eq!(
        in_project(&fx, &["clinv", "snapshots", "show", prefix]),
        [prod[1].clone()]
    );
    assert_eq!(
        in_project(&fx, &["clinv", "snapshots", "show", "latest~"]),
        ["latest~1"]
    );
    // diff: both sides take references, the live object, stdin and files.
    for words in [
        &["clinv", "diff", ""][..],
        &["clinv", "diff", "latest~1", ""],
    ] {
        let got = in_project(&fx, words);
        for want in want
            .iter()
            .map(String::as_str)
            .chain(["cluster", "-", "clusters/"])
        {
            assert!(
                got.iter().any(|c| c == want),
                "{words:?}: {want} in {got:?}"
            );
        }
    }
    assert_eq!(
        in_project(&fx, &["clinv", "diff", "latest~1", "cl"]),
        ["cluster", "clusters/"]
    );
    // Outside the project, two domains in the store and none selected: every id (an id
    // is unique across domains), no latest (it needs one domain).
    let store = fx.store();
    let store = store.to_str().unwrap();
    let words = ["clinv", "--snapshots", store, "snapshots", "show", ""];
    let got = values(candidates(
        clinv(
            &request(&words)
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        )
        .env_remove("CLINV_SNAPSHOTS")
        .cwd(fx.away.path()),
        &words,
    ));
    let mut every: Vec<String> = lab.iter().chain(prod.iter()).cloned().collect();
    every.sort();
    let mut sorted = got.clone();
    sorted.sort();
    assert_eq!(sorted, every, "{got:?}");
}

/// Every file of a tree with its length and modification time.
fn tree(dir: &Path) -> Vec<(String, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            }
            out.push((
                entry.path().display().to_string(),
                meta.len(),
                meta.modified().unwrap(),
            ));
        }
    }
    out.sort();
    out
}

fn completing_writes_nothing_and_migrates_no_store() {
    use crate::v1::{self, Journal};
    let fx = Fx::new();
    // A version-1 store (one `journal` file): a write would migrate it to segments.
    let v1_store = tempfile::tempdir().unwrap();
    let objects = v1::render(fx.root(), "prod.acme.example");
    let mut journal = Journal::create(v1_store.path(), "prod.acme.example");
    journal.objects(&objects);
    for n in 0..3 {
        journal.snapshot(&v1::id(0xc0 + n), 1_700_000_000 + n as i64, &objects);
    }
    journal.finish();
    let before = (tree(fx.root()), tree(v1_store.path()));
    let v1_dir = v1_store.path().to_str().unwrap();
    for words in [
        &["clinv", "snapshots", "show", ""][..],
        &["clinv", "diff", ""],
        &["clinv", "render", "--domain", ""],
        &["clinv", "log", "--domain", ""],
        &["clinv", "--snapshots", v1_dir, "snapshots", "show", ""],
    ] {
        let got = in_project(&fx, words);
        assert!(!got.is_empty(), "{words:?}");
    }
    let got = values(in_project(
        &fx,
        &[
            "clinv",
            "--snapshots",
            v1_dir,
            "snapshots",
            "show",
            "latest",
        ],
    ));
    assert_eq!(got, ["latest", "latest~1"]);
    assert_eq!((tree(fx.root()), tree(v1_store.path())), before);
    assert!(!v1_store.path().join("prod.acme.example/segments").exists());
}

/// Every file and folder under `dir`, by its path relative to `dir`, with a file's
/// bytes (`None` for a folder): what "byte-identical" compares (times are not).
fn contents(dir: &Path) -> std::collections::BTreeMap<String, Option<Vec<u8>>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let name = path.strip_prefix(dir).unwrap().display().to_string();
            if path.is_dir() {
                stack.push(path);
                out.insert(name, None);
            } else {
                out.insert(name, Some(std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}

/// Completion writes no segment summary — the cache a listing writes for a sealed
/// segment — whether the summary is missing or stale (its segment changed since): the
/// store is byte-identical after every request, while a listing does write it.
fn completing_writes_no_summary() {
    use crate::v1::{self, Journal};
    let fx = Fx::new();
    let domain = "prod.acme.example";
    let store = tempfile::tempdir().unwrap();
    let dir = store.path().to_str().unwrap();
    let objects = v1::render(fx.root(), domain);
    let mut journal = Journal::create(store.path(), domain);
    journal.objects(&objects);
    for n in 0..5u64 {
        // One record from a clock that went back: the migration keeps the journal as
        // the sealed segment 000000.log (an ordered one would be rewritten).
        let secs = 1_700_000_000 + 60 * n as i64 - if n == 2 { 3600 } else { 0 };
        journal.snapshot(&v1::id(0xd0 + n), secs, &objects);
    }
    journal.finish();
    let offline = repo().join("examples/offline.kubeconfig");
    let publish = [
        "--snapshots",
        dir,
        "publish",
        "--domain",
        domain,
        "--kubeconfig",
        offline.to_str().unwrap(),
    ];
    fx.in_project(&publish).run().success();
    let generation = store.path().join(domain).join("segments/1");
    let summary = generation.join("000000.sum");
    assert!(generation.join("000000.log").is_file() && !summary.exists());
    let requests: [&[&str]; 4] = [
        &["clinv", "--snapshots", dir, "snapshots", "show", ""],
        &["clinv", "--snapshots", dir, "diff", "latest", ""],
        &["clinv", "--snapshots", dir, "push", "--snapshot", ""],
        &[
            "clinv",
            "--snapshots",
            dir,
            "snapshots",
            "show",
            "--domain",
            domain,
            "lat",
        ],
    ];
    let complete_all = |what: &str| {
        let before = contents(store.path());
        for words in requests {
            if words.contains(&"push") && !cfg!(feature = "gitops") {
                continue;
            }
            let got = values(in_project(&fx, words));
            assert!(!got.is_empty(), "{what} {words:?}");
        }
        assert!(
            contents(store.path()) == before,
            "{what}: completion wrote into the store"
        );
    };
    complete_all("summary missing");
    // No lock either: with the domain's lock held and no wait allowed, a completion that
    // took it would offer nothing.
    {
        let _held = hold_lock(&store.path().join(domain).join("lock"));
        let words = &["clinv", "--snapshots", dir, "snapshots", "show", ""];
        let args = request(words);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let cmd = fx.in_project(&args).env("CLINV_LOCK_TIMEOUT", "0");
        assert!(
            !values(candidates(cmd, words)).is_empty(),
            "a held lock stopped completion"
        );
    }
    // A listing writes the summary (the cache completion leaves alone)...
    let list = ["--snapshots", dir, "snapshots", "list", "--domain", domain];
    fx.in_project(&list).run().success();
    assert!(summary.is_file(), "the listing wrote the summary");
    // ...which goes stale when its segment is rewritten (same bytes, a new identity).
    let sealed = generation.join("000000.log");
    let bytes = std::fs::read(&sealed).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&sealed, &bytes).unwrap();
    let stale = std::fs::read(&summary).unwrap();
    complete_all("summary stale");
    // It was stale indeed: the next listing replaces it.
    fx.in_project(&list).run().success();
    assert_ne!(
        std::fs::read(&summary).unwrap(),
        stale,
        "the summary was not stale"
    );
}

fn formats_complete_per_command() {
    let fx = Fx::new();
    for (words, want) in [
        (&["clinv", "render", "-o", ""][..], &["yaml", "json"][..]),
        (&["clinv", "crd", "--output", ""], &["yaml", "json"]),
        (
            &["clinv", "snapshots", "show", "latest", "-o", ""],
            &["yaml", "json"],
        ),
        (
            &["clinv", "snapshots", "list", "-o", ""],
            &["table", "wide", "name", "json", "yaml", "jsonpath="],
        ),
        (
            &["clinv", "addons", "-o", ""],
            &["table", "wide", "name", "json", "yaml", "jsonpath="],
        ),
        (
            &["clinv", "updates", "-o", ""],
            &["table", "wide", "name", "json", "yaml", "jsonpath="],
        ),
        (
            &["clinv", "diff", "a", "b", "-o", ""],
            &["text", "json", "markdown", "unified"],
        ),
        (&["clinv", "log", "-o", ""], &["text", "json", "markdown"]),
        (&["clinv", "report", "-o", ""], &["html", "json"]),
        (
            &["clinv", "status", "-o", ""],
            &["text", "wide", "json", "prometheus"],
        ),
        (&["clinv", "drift", "-o", ""], &["text", "wide", "json"]),
        (
            &["clinv", "publish", "-o", ""],
            &["table", "wide", "json", "yaml"],
        ),
        (&["clinv", "version", "-o", ""], &["text", "json"]),
        (
            &["clinv", "snapshots", "verify", "-o", ""],
            &["text", "json"],
        ),
        (&["clinv", "snapshots", "gc", "-o", ""], &["text", "json"]),
        (&["clinv", "snapshots", "list", "-o", "w"], &["wide"]),
        (&["clinv", "addons", "-o", "js"], &["json", "jsonpath="]),
        (&["clinv", "updates", "-o", "jsonpath={"], &[]),
        (&["clinv", "render", "--output=j"], &["--output=json"]),
        (&["clinv", "log", "-o", "m"], &["markdown"]),
    ] {
        assert_eq!(in_project(&fx, words), want, "{words:?}");
    }
    // Each completed format is one the command accepts.
    for (command, formats) in [
        (&["render"][..], &["yaml", "json"][..]),
        (&["snapshots", "list"], &["table", "wide", "name", "json"]),
    ] {
        for f in formats {
            let args = [command, &["-o", f]].concat();
            fx.in_project(&args).run().success();
        }
    }
    // --index FILE|URL: files (and folders to walk into).
    write(fx.root(), "index.json", "{}");
    assert_eq!(
        in_project(&fx, &["clinv", "updates", "--index", "in"]),
        ["index.json"]
    );
    assert_eq!(
        in_project(&fx, &["clinv", "agent", "--index", "clu"]),
        ["clusters/"]
    );
    // The commands and subcommands themselves.
    let top = in_project(&fx, &["clinv", ""]);
    for c in [
        "render",
        "snapshots",
        "diff",
        "log",
        "completions",
        "version",
    ] {
        assert!(top.iter().any(|t| t == c), "{c} in {top:?}");
    }
    assert_eq!(in_project(&fx, &["clinv", "snapshots", "s"]), ["show"]);
}

fn completions_prints_the_dynamic_registration() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let printed = clinv(&["completions", shell]).run().success().stdout;
        let env = clinv(&[]).env("COMPLETE", shell).run().success().stdout;
        assert_eq!(printed, env, "{shell}");
        assert!(
            printed.contains(env!("CARGO_BIN_EXE_clinv")) && printed.contains("COMPLETE"),
            "{shell}: {printed}"
        );
    }
    // --static: clap's self-contained script (it names the commands itself).
    let run = clinv(&["completions", "bash", "--static"]).run().success();
    assert!(run.stdout.contains("_clinv()") && run.stdout.contains("snapshots"));
    assert!(!run.stdout.contains("COMPLETE"));
    // An unknown shell in COMPLETE is a usage error; COMPLETE empty or 0 is off.
    let run = clinv(&["version"]).env("COMPLETE", "tcsh").run();
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .starts_with("[error] COMPLETE: unknown shell `tcsh`"),
        "{}",
        run.stderr
    );
    for off in ["", "0"] {
        let run = clinv(&["version"]).env("COMPLETE", off).run().success();
        assert!(run.stdout.starts_with("clinv "), "{}", run.stdout);
    }
}

/// The bash prerequisite (`Need::Bash`).
pub fn bash() -> Result<(), String> {
    match std::process::Command::new("bash")
        .args(["-c", "complete -p >/dev/null; true"])
        .output()
    {
        Ok(out) if out.status.success() => Ok(()),
        _ => Err(
            "bash not found (apt-get install -y bash); the registration script is not run".into(),
        ),
    }
}

/// Sources `clinv completions bash` in a real bash and calls the function it
/// registered for `clinv` as readline would: COMP_WORDS, COMP_CWORD, COMP_LINE,
/// COMP_POINT, COMP_TYPE, and the command, current and previous words.
fn bash_completes_through_the_registration() {
    let fx = Fx::new();
    let script_dir = tempfile::tempdir().unwrap();
    let script = script_dir.path().join("clinv.bash");
    let printed = clinv(&["completions", "bash"]).run().success().stdout;
    std::fs::write(&script, printed).unwrap();
    let prod = ids(&fx, "prod.acme.example");
    let drive = |line: &str| -> Vec<String> {
        let program = format!(
            r#"source {script}
complete -p clinv >&2 || exit 9
COMP_LINE={line:?}
COMP_POINT=${{#COMP_LINE}}
read -r -a COMP_WORDS <<< "$COMP_LINE"
[[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
COMP_TYPE=9
fn=$(complete -p clinv | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
"$fn" clinv "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}"
"#,
            script = script.display()
        );
        let out = std::process::Command::new("bash")
            .args(["--norc", "--noprofile", "-c", &program])
            .current_dir(fx.root())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", "/nonexistent")
            .env("CLINV_SNAPSHOTS", fx.store())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{line}: {stderr}");
        assert!(
            stderr.starts_with("complete ")
                && stderr.contains(" -F _clap_complete_clinv clinv")
                && stderr.lines().count() == 1,
            "{line}: {stderr}"
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    };
    assert_eq!(drive("clinv render --domain pr"), ["prod.acme.example"]);
    assert_eq!(drive("clinv snapshots show lat"), ["latest", "latest~1"]);
    assert_eq!(
        drive(&format!("clinv diff {}", &prod[0][..6])),
        [prod[0].clone()]
    );
    assert_eq!(
        drive("clinv snapshots list -o "),
        ["table", "wide", "name", "json", "yaml", "jsonpath="]
    );
    assert_eq!(drive("clinv snaps"), ["snapshots"]);
}

trials! {
    Nothing: [
        domains_come_from_the_project_and_the_store,
        nothing_to_complete_is_silent,
        snapshot_references_complete_from_the_selected_domain,
        completing_writes_nothing_and_migrates_no_store,
        completing_writes_no_summary,
        formats_complete_per_command,
        completions_prints_the_dynamic_registration,
    ],
    Bash: [bash_completes_through_the_registration],
}
