//! Embeds the Git commit the binary is built from (`clinv version`): `CLINV_GIT_COMMIT`
//! when the build sets it (a release pipeline, a source tarball), else `git rev-parse
//! HEAD` in a checkout; nothing outside Git (then `commit: unknown`).

#![allow(clippy::disallowed_methods, clippy::print_stdout)] // a build script talks to cargo on stdout

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=CLINV_GIT_COMMIT");
    if std::env::var_os("CLINV_GIT_COMMIT").is_some() {
        return;
    }
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let Some(commit) = git(&["rev-parse", "HEAD"]) else {
        return;
    };
    println!("cargo:rustc-env=CLINV_GIT_COMMIT={commit}");
    // A new commit (or a checkout of another) moves HEAD or the branch it names.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        let dir = Path::new(&dir);
        println!("cargo:rerun-if-changed={}", dir.join("HEAD").display());
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={}", dir.join(branch).display());
        }
        println!(
            "cargo:rerun-if-changed={}",
            dir.join("packed-refs").display()
        );
    }
}
