//! Headless Chromium for the HTML report tests: a screenshot and the rendered DOM.
//!
//! Uses `/usr/bin/chromium` (Debian: `apt-get install -y chromium`). When it is missing
//! the tests that need it fail under `CI=true` and are reported as ignored otherwise.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
/// The window the screenshots are taken at.
pub const WIDTH: u32 = 1280;
pub const HEIGHT: u32 = 1600;
const DEADLINE: Duration = Duration::from_secs(90);

pub struct Browser {
    path: PathBuf,
}

/// Whether the browser is there (the runner's prerequisite `Need::Chromium`).
pub fn present() -> Result<(), String> {
    match Path::new(CHROMIUM).is_file() {
        true => Ok(()),
        false => Err(format!(
            "{CHROMIUM} not found (apt-get install -y chromium); the HTML report is not rendered"
        )),
    }
}

/// The browser; only the tests registered with `Need::Chromium` call this.
pub fn chromium() -> Browser {
    present().unwrap_or_else(|why| panic!("{why}"));
    Browser {
        path: PathBuf::from(CHROMIUM),
    }
}

impl Browser {
    /// Runs Chromium headless on `page` with `extra` flags and a fresh profile; returns stdout.
    fn run(&self, page: &Path, extra: &[String]) -> String {
        let profile = tempfile::tempdir().unwrap();
        let url = format!("file://{}", page.canonicalize().unwrap().display());
        let mut child = Command::new(&self.path)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                &format!("--user-data-dir={}", profile.path().display()),
                &format!("--window-size={WIDTH},{HEIGHT}"),
            ])
            .args(extra)
            .arg(&url)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromium starts");
        // Read stdout on a thread so a full pipe cannot stall the browser.
        let mut stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut stdout, &mut s).unwrap();
            s
        });
        let start = Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                assert!(status.success(), "chromium failed: {status}");
                break;
            }
            if start.elapsed() > DEADLINE {
                let _ = child.kill();
                let _ = child.wait();
                panic!("chromium did not finish within {DEADLINE:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        reader.join().unwrap()
    }

    /// Takes a screenshot of `page` into `png`.
    pub fn screenshot(&self, page: &Path, png: &Path) {
        self.run(page, &[format!("--screenshot={}", png.display())]);
        assert!(png.is_file(), "no screenshot written to {}", png.display());
    }

    /// A screenshot of `page` (in its own folder) that is not blank: larger than
    /// `min_bytes` and than eight times a blank page's at the same size. `keep_as`:
    /// with `CLINV_KEEP_SCREENSHOTS=DIR`, the screenshot is copied to `DIR/keep_as`.
    pub fn screenshot_not_blank(&self, page: &Path, min_bytes: u64, keep_as: &str) -> Vec<u8> {
        let dir = page.parent().expect("the page is in a folder");
        let png = dir.join(keep_as);
        self.screenshot(page, &png);
        let bytes = std::fs::read(&png).unwrap();
        let blank = dir.join("blank.html");
        std::fs::write(&blank, "<!DOCTYPE html><html><body></body></html>").unwrap();
        let blank_png = dir.join("blank.png");
        self.screenshot(&blank, &blank_png);
        let blank_len = std::fs::metadata(&blank_png).unwrap().len();
        assert!(
            bytes.len() as u64 > min_bytes && bytes.len() as u64 > 8 * blank_len,
            "the screenshot looks blank: {} bytes (blank page: {blank_len})",
            bytes.len()
        );
        if let Some(keep) = std::env::var_os("CLINV_KEEP_SCREENSHOTS") {
            std::fs::copy(&png, Path::new(&keep).join(keep_as)).unwrap();
        }
        bytes
    }

    /// The DOM after load, serialised.
    pub fn dump_dom(&self, page: &Path) -> String {
        self.run(page, &["--dump-dom".to_string()])
    }
}

/// Width and height from a PNG's IHDR chunk.
pub fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}
