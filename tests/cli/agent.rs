use crate::support::*;

fn bad_intervals_are_usage_errors() {
    for bad in ["0s", "-5s", "5", "1x", ""] {
        let flag = format!("--interval={bad}");
        let run = clinv(&["agent", "--once", &flag]).run();
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
        assert!(run.stderr.contains("invalid duration"), "{}", run.stderr);
    }
    assert_eq!(
        clinv(&["agent", "--index", "http://x/i.json", "--once"])
            .run()
            .code,
        2
    );
}

fn without_a_cluster_one_pass_warns_and_strict_exits_with_the_reason() {
    // KUBECONFIG points nowhere: no kubeconfig.
    let run = clinv(&["agent", "--once"]).run().success();
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "[warn] agent: cannot connect: no-kubeconfig: kubeconfig not found (/nonexistent/kubeconfig) — nothing written\n"
    );
    assert_eq!(clinv(&["agent", "--once", "--strict"]).run().code, 3);
    // Loop mode never exits on it; a bounded run logs the condition once.
    let run = clinv(&["agent", "--interval", "10ms", "--max-iterations", "3"])
        .run()
        .success();
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}

fn an_unusable_index_is_a_warning_and_with_once_strict_an_error() {
    let run = clinv(&["agent", "--once", "--index", "/nonexistent/index.json"])
        .run()
        .success();
    assert!(
        run.stderr
            .starts_with("[warn] agent: /nonexistent/index.json: No such file or directory"),
        "{}",
        run.stderr
    );
    let strict = clinv(&[
        "agent",
        "--once",
        "--strict",
        "--index",
        "/nonexistent/index.json",
    ])
    .run();
    assert_eq!(strict.code, 1);
    assert_has(&strict.stderr, "[error] /nonexistent/index.json");
}

/// Whether no Kubernetes service account is mounted here (the runner's prerequisite
/// `Need::NoServiceAccount`).
pub fn outside_a_pod() -> Result<(), String> {
    const ACCOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
    match std::path::Path::new(ACCOUNT).exists() {
        false => Ok(()),
        true => Err(format!(
            "this machine has a mounted service account ({ACCOUNT})"
        )),
    }
}

fn in_a_pod_the_service_account_is_used_unless_a_kubeconfig_is_given() {
    // KUBERNETES_SERVICE_HOST switches to in-cluster configuration, which needs the pod's
    // mounted token: here it is missing, so the configuration is unusable (strict: 4).
    let pod = |args: &[&str]| {
        clinv(args)
            .env("KUBERNETES_SERVICE_HOST", "127.0.0.1")
            .env("KUBERNETES_SERVICE_PORT", "1")
            .run()
    };
    let run = pod(&["agent", "--once"]).success();
    assert!(
        run.stderr.starts_with(
            "[warn] agent: cannot connect: bad-kubeconfig: in-cluster configuration: "
        ),
        "{}",
        run.stderr
    );
    assert_eq!(pod(&["agent", "--once", "--strict"]).code, 4);
    // An explicit --kubeconfig wins over the pod environment.
    let run = pod(&["agent", "--once", "--kubeconfig", "/nonexistent/kc"]).success();
    assert_has(&run.stderr, "kubeconfig not found (/nonexistent/kc)");
}

trials! {
    Nothing: [
        bad_intervals_are_usage_errors,
        without_a_cluster_one_pass_warns_and_strict_exits_with_the_reason,
        an_unusable_index_is_a_warning_and_with_once_strict_an_error,
    ],
    NoServiceAccount: [
        in_a_pod_the_service_account_is_used_unless_a_kubeconfig_is_given,
    ],
}
