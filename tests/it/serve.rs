//! `mmsim serve` driven as a browser would, over real sockets: a change is
//! answered with the numbers `mmsim run` gives for the same setting and
//! seeds, and the server survives what a careless or hostile page sends
//! (bad JSON, huge bodies, unknown keys, paths out of its folders, wrong
//! methods, a closed browser, a hundred fast slider moves).

use super::common::{mmsim, scenario, stderr};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A served scenario: the child process and its address. Killed on drop.
struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The smoke preset copied into `dir` (saves go beside it), served on a
/// free port with three seeds and a short run.
fn start(dir: &Path, extra: &[&str]) -> Server {
    let file = dir.join("smoke.toml");
    std::fs::copy(scenario("smoke.toml"), &file).unwrap();
    let out = dir.join("out");
    let mut args = vec![
        "serve".to_string(),
        file.to_string_lossy().into_owned(),
        "--port".into(),
        "0".into(),
        "--seeds".into(),
        "3".into(),
        "--out".into(),
        out.to_string_lossy().into_owned(),
    ];
    for s in SHORT {
        args.push("--set".into());
        args.push(s.to_string());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split("listening on ")
        .nth(1)
        .and_then(|r| r.split(';').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    Server { child, addr }
}

const SHORT: [&str; 2] = ["run.duration=\"40m\"", "run.warmup=\"5m\""];

/// Sends raw bytes and returns the status and body of the answer.
fn raw(addr: &str, request: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(180))).unwrap();
    let _ = s.write_all(request);
    // The request is all sent: a server waiting for more (an unended
    // request line) sees the end of it rather than a silent client.
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut bytes = Vec::new();
    let _ = s.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|x| x.1.to_string())
        .unwrap_or_default();
    (status, body)
}

fn request(addr: &str, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
    let body = body.unwrap_or("");
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    raw(addr, req.as_bytes())
}

fn get_json(addr: &str, path: &str) -> Value {
    let (status, body) = request(addr, "GET", path, None);
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap()
}

fn post(addr: &str, path: &str, body: &Value) -> (u16, Value) {
    let (status, text) = request(addr, "POST", path, Some(&body.to_string()));
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn alive(addr: &str) {
    let s = get_json(addr, "/api/state");
    assert!(s["seeds"].is_array(), "{s}");
}

/// `mmsim run`'s summary of the smoke preset with `sets`, on `seed`.
fn run_summary(dir: &Path, seed: u64, sets: &[String]) -> Value {
    let out = dir.join(format!("run-{seed}-{}", sets.len()));
    let file = scenario("smoke.toml");
    let seed_text = seed.to_string();
    let mut args = vec![
        "run", &file, "--quiet", "--tables", "none", "--seed", &seed_text,
    ];
    let out_text = out.to_string_lossy().into_owned();
    args.extend(["--out", &out_text]);
    let all: Vec<String> = SHORT
        .iter()
        .map(|s| s.to_string())
        .chain(sets.iter().cloned())
        .collect();
    for s in &all {
        args.extend(["--set", s]);
    }
    let o = mmsim(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

fn at(v: &Value, path: &str) -> f64 {
    path.split('.')
        .fold(v, |v, k| &v[k])
        .as_f64()
        .unwrap_or_else(|| panic!("{path} in {v}"))
}

#[test]
fn a_change_is_answered_with_what_mmsim_run_gives_on_the_same_seeds() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(dir.path(), &[]);
    let controls = get_json(&srv.addr, "/api/controls");
    let keys: Vec<&str> = controls["controls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    // The widening policy's keys come from the schema, with the reference's range.
    for k in [
        "policy.base",
        "policy.rate_per_s",
        "policy.max",
        "arrivals.rate_per_s",
    ] {
        assert!(keys.contains(&k), "{keys:?}");
    }
    let base = &controls["controls"][0];
    assert_eq!(base["key"], "policy.base");
    assert_eq!(base["min"], 0.0);
    assert_eq!(base["unit"], "rating points");

    let (status, answer) = post(
        &srv.addr,
        "/api/try",
        &json!({"values": {"policy.base": 30}}),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["sets"], json!(["policy.base=30.0"]));
    let s = get_json(&srv.addr, "/api/state?wait=170");
    assert_eq!(s["complete"], true, "{s}");
    assert_eq!(s["current"]["sets"], json!(["policy.base=30.0"]));
    let seeds: Vec<u64> = s["seeds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(seeds, vec![7, 8, 9]);
    let metrics = [
        "wait_s.p50",
        "wait_s.p90",
        "abandon_rate",
        "spread_rating.mean",
    ];
    let mut diffs = vec![Vec::new(); metrics.len()];
    for (i, &seed) in seeds.iter().enumerate() {
        let cur = run_summary(dir.path(), seed, &["policy.base=30.0".into()]);
        let base = run_summary(dir.path(), seed, &[]);
        let row = &s["per_seed"][i];
        assert_eq!(row["seed"], seed);
        for (m, key) in metrics.iter().enumerate() {
            // The page's values are the runs' own, to the last bit.
            assert_eq!(
                row["cur"]["metrics"][key].as_f64(),
                Some(at(&cur, key)),
                "{key} seed {seed}"
            );
            assert_eq!(
                row["base"]["metrics"][key].as_f64(),
                Some(at(&base, key)),
                "{key} seed {seed}"
            );
            diffs[m].push(at(&cur, key) - at(&base, key));
        }
    }
    for (m, key) in metrics.iter().enumerate() {
        let shown = s["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["key"] == *key)
            .unwrap();
        let d = &diffs[m];
        let mean = d.iter().sum::<f64>() / 3.0;
        assert!(
            (shown["diff"]["mean"].as_f64().unwrap() - mean).abs() < 1e-9,
            "{key}"
        );
        // Student-t with 2 degrees of freedom: 4.302653.
        let sd = (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
        let half = 4.302_652_729_7 * sd / 3f64.sqrt();
        let lo = shown["diff"]["low"].as_f64().unwrap();
        let hi = shown["diff"]["high"].as_f64().unwrap();
        assert!(
            (lo - (mean - half)).abs() < 1e-6 && (hi - (mean + half)).abs() < 1e-6,
            "{key}: {shown}"
        );
        let verdict = shown["verdict"].as_str().unwrap();
        if d.iter().all(|x| *x == 0.0) {
            assert_eq!(verdict, "same", "{key}");
        } else if lo <= 0.0 && hi >= 0.0 {
            assert_eq!(verdict, "cannot tell from noise", "{key}");
        } else {
            assert!(
                verdict == "better" || verdict == "worse",
                "{key}: {verdict}"
            );
        }
    }
    // A narrower starting window: matches are closer on every seed.
    assert!(diffs[3].iter().all(|x| *x < 0.0), "{:?}", diffs[3]);

    // Both plots are SVG from the report's plot code.
    for plot in ["/api/plot/cdf.svg", "/api/plot/plane.svg"] {
        let (status, body) = request(&srv.addr, "GET", plot, None);
        assert_eq!(status, 200);
        assert!(
            body.starts_with("<svg") && body.contains("</svg>"),
            "{plot}"
        );
    }
    let (_, plane) = request(&srv.addr, "GET", "/api/plot/plane.svg", None);
    assert!(
        plane.contains("Pareto front") && plane.contains("#1"),
        "the plane shows both settings"
    );

    // Pin: the change becomes the baseline, so the same setting now differs by nothing.
    let (status, pinned) = post(&srv.addr, "/api/pin", &json!({}));
    assert_eq!((status, pinned["baseline"].as_u64()), (200, Some(1)));
    let s = get_json(&srv.addr, "/api/state?wait=60");
    assert!(
        s["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["verdict"] == "same"),
        "{s}"
    );
}

#[test]
fn save_writes_a_new_file_beside_the_scenario_that_runs_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(dir.path(), &[]);
    let (status, _) = post(
        &srv.addr,
        "/api/try",
        &json!({"values": {"policy.base": 60, "arrivals.rate_per_s": 1.5}}),
    );
    assert_eq!(status, 200);
    let (status, saved) = post(&srv.addr, "/api/save", &json!({"file": "/etc/evil.toml"}));
    assert_eq!(status, 200, "{saved}");
    // The page's body names no path: the server picks the name.
    assert_eq!(saved["file"], "smoke-serve-1.toml");
    let (_, again) = post(&srv.addr, "/api/save", &json!({}));
    assert_eq!(again["file"], "smoke-serve-2.toml");
    assert!(!Path::new("/etc/evil.toml").exists());
    let text = std::fs::read_to_string(dir.path().join("smoke-serve-1.toml")).unwrap();
    assert!(text.starts_with("# Saved by `mmsim serve` with: run.duration=\"40m\", run.warmup=\"5m\", arrivals.rate_per_s=1.5, policy.base=60.0\n"), "{text}");
    // Comments of the served file are kept, and the values changed in place.
    assert!(
        text.contains("base = 60.0") && text.contains("rate_per_s = 1.5"),
        "{text}"
    );
    let original = std::fs::read_to_string(scenario("smoke.toml")).unwrap();
    assert_eq!(
        text.lines().filter(|l| l.starts_with('#')).count(),
        original.lines().filter(|l| l.starts_with('#')).count() + 1
    );
    let o = mmsim(&[
        "validate",
        &dir.path().join("smoke-serve-1.toml").to_string_lossy(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_full_report_is_served_from_its_folder_only() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(dir.path(), &[]);
    let (status, started) = post(&srv.addr, "/api/report", &json!({}));
    assert_eq!(status, 202, "{started}");
    let until = Instant::now() + Duration::from_secs(170);
    let url = loop {
        let r = get_json(&srv.addr, "/api/report");
        if r["state"] == "done" {
            break r["url"].as_str().unwrap().to_string();
        }
        assert_ne!(r["state"], "failed", "{r}");
        assert!(Instant::now() < until, "the report never finished");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(url, "/report/1/report.html");
    let (status, page) = request(&srv.addr, "GET", &url, None);
    assert_eq!(status, 200);
    assert!(page.contains("<html") && page.contains("smoke"));
    let (status, summary) = request(&srv.addr, "GET", "/report/1/summary.json", None);
    assert_eq!(status, 200);
    assert!(summary.contains("\"wait_s\""));
    for bad in [
        "/report/1/../smoke.toml",
        "/report/1/.mmsim-output.json",
        "/report/2/report.html",
        "/report/0/report.html",
        "/report/1/%2e%2e/smoke.toml",
        "/report/1//etc/passwd",
        "/report/x/report.html",
    ] {
        assert_eq!(request(&srv.addr, "GET", bad, None).0, 404, "{bad}");
    }
}

#[test]
fn malformed_requests_get_clear_errors_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(dir.path(), &[]);
    let a = srv.addr.as_str();
    let check = |method: &str, path: &str, body: Option<&str>, want: u16, says: &str| {
        let (status, text) = request(a, method, path, body);
        assert_eq!(status, want, "{method} {path} {body:?}: {text}");
        assert!(text.contains(says), "{method} {path}: {text}");
    };
    check("POST", "/api/try", Some("{not json"), 400, "not JSON");
    check("POST", "/api/try", Some("[1, 2]"), 400, "values");
    check(
        "POST",
        "/api/try",
        Some(r#"{"values": {"policy.nope": 1}}"#),
        422,
        "policy.nope",
    );
    // A key that would name a file is not a control.
    check(
        "POST",
        "/api/try",
        Some(r#"{"values": {"arrivals.trace": "/etc/passwd"}}"#),
        422,
        "not a control",
    );
    check(
        "POST",
        "/api/try",
        Some(r#"{"values": {"population.ratings_file": "../x"}}"#),
        422,
        "not a control",
    );
    // The validator's own message, beside the control it is about.
    let (status, v) = post(a, "/api/try", &json!({"values": {"policy.base": -5}}));
    assert_eq!(status, 422);
    assert_eq!(
        v["errors"]["policy.base"],
        "`policy.base` must be zero or more, got -5"
    );
    let (_, v) = post(a, "/api/try", &json!({"values": {"policy.max": 50}}));
    assert!(
        v["errors"]
            .as_object()
            .unwrap()
            .keys()
            .any(|k| k == "policy.max"),
        "{v}"
    );
    let (_, v) = post(
        a,
        "/api/try",
        &json!({"values": {"policy.mode": "sideways"}}),
    );
    assert_eq!(v["errors"]["policy.mode"], "must be one of event, tick");
    let (_, v) = post(a, "/api/try", &json!({"values": {"policy.base": "wide"}}));
    assert_eq!(v["errors"]["policy.base"], "must be a number");
    // Each value may pass alone and the setting still break a rule between keys.
    let (status, v) = post(a, "/api/try", &json!({"values": {"policy.base": 1e300}}));
    assert_eq!(status, 422, "{v}");
    // Absurd traffic is refused before it occupies the machine.
    let (status, v) = post(
        a,
        "/api/try",
        &json!({"values": {"arrivals.rate_per_s": 1e7}}),
    );
    assert_eq!(status, 422, "{v}");
    // Bodies: too large (announced and not), wrong type.
    let huge = format!(
        "{{\"values\": {{\"policy.base\": 1{}}}}}",
        " ".repeat(2 << 20)
    );
    check("POST", "/api/try", Some(&huge), 413, "larger");
    let chunked = format!(
        "POST /api/try HTTP/1.1\r\nHost: {a}\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n{}\r\n0\r\n\r\n",
        "x".repeat(0x100000)
    );
    assert_eq!(raw(a, chunked.as_bytes()).0, 413);
    // A well-formed chunked body is read like any other.
    let body = r#"{"values": {"policy.base": -5}}"#;
    let (first, second) = body.split_at(10);
    let chunked = format!(
        "POST /api/try HTTP/1.1\r\nHost: {a}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{first}\r\n{:x};ext=1\r\n{second}\r\n0\r\n\r\n",
        first.len(),
        second.len()
    );
    let (status, text) = raw(a, chunked.as_bytes());
    assert_eq!(status, 422, "{text}");
    assert!(text.contains("must be zero or more"), "{text}");
    let bad_chunk = format!("POST /api/try HTTP/1.1\r\nHost: {a}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
    assert_eq!(raw(a, bad_chunk.as_bytes()).0, 400);
    let many_headers: String = (0..100).map(|i| format!("X-{i}: y\r\n")).collect();
    let req = format!("GET /api/state HTTP/1.1\r\nHost: {a}\r\n{many_headers}\r\n");
    assert_eq!(raw(a, req.as_bytes()).0, 431);
    let long = format!("GET /{} HTTP/1.1\r\nHost: {a}\r\n\r\n", "a".repeat(20_000));
    assert_eq!(raw(a, long.as_bytes()).0, 431);
    let bad_length = format!("POST /api/try HTTP/1.1\r\nHost: {a}\r\nContent-Type: application/json\r\nContent-Length: -3\r\n\r\n");
    assert_eq!(raw(a, bad_length.as_bytes()).0, 400);
    let short_body = format!("POST /api/try HTTP/1.1\r\nHost: {a}\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{{}}");
    assert_eq!(raw(a, short_body.as_bytes()).0, 400);
    let form = format!(
        "POST /api/pin HTTP/1.1\r\nHost: {a}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{{}}"
    );
    assert_eq!(raw(a, form.as_bytes()).0, 415);
    // Methods and paths.
    check("DELETE", "/api/try", None, 405, "POST");
    check("GET", "/api/try", None, 405, "POST");
    check("POST", "/api/state", Some("{}"), 405, "GET");
    check("PUT", "/", Some("{}"), 405, "GET");
    for path in [
        "/../../etc/passwd",
        "/..%2f..%2fetc/passwd",
        "/etc/passwd",
        "/api/../../etc/passwd",
        "/nope",
        "/smoke.toml",
        "/out/report-1/report.html",
    ] {
        check("GET", path, None, 404, "no such");
    }
    // Another Host is how a foreign page would reach a local server.
    let rebinding = "GET /api/state HTTP/1.1\r\nHost: evil.example:80\r\nConnection: close\r\n\r\n";
    assert_eq!(raw(a, rebinding.as_bytes()).0, 421);
    // Garbage on the wire.
    raw(a, b"\x00\x01\x02 not http at all\r\n\r\n");
    raw(a, b"GET\r\n\r\n");
    raw(a, &[0xff; 9000]);
    alive(a);
    // No file appeared beside the scenario.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| n == "smoke.toml" || n == "out"),
        "{names:?}"
    );
}

#[test]
fn a_hundred_fast_moves_and_a_closed_browser_leave_the_last_answer() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(dir.path(), &["--jobs", "2"]);
    let a = srv.addr.as_str();
    // A browser that goes away mid-request and mid-poll.
    {
        let mut s = TcpStream::connect(a).unwrap();
        s.write_all(b"POST /api/try HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{\"val")
            .unwrap();
    }
    {
        let mut s = TcpStream::connect(a).unwrap();
        let req = format!("GET /api/state?wait=100 HTTP/1.1\r\nHost: {a}\r\n\r\n");
        s.write_all(req.as_bytes()).unwrap();
    }
    // Browsers that send half a body and then stall, held open throughout.
    let _stalled: Vec<TcpStream> = (0..12)
        .map(|_| {
            let mut s = TcpStream::connect(a).unwrap();
            let req = format!("POST /api/try HTTP/1.1\r\nHost: {a}\r\nContent-Type: application/json\r\nContent-Length: 900\r\n\r\n{{\"values\":");
            s.write_all(req.as_bytes()).unwrap();
            s
        })
        .collect();
    let started = Instant::now();
    for i in 0..100 {
        let (status, body) = post(a, "/api/try", &json!({"values": {"policy.base": 20 + i}}));
        assert_eq!(status, 200, "move {i}: {body}");
    }
    let (status, last) = post(a, "/api/try", &json!({"values": {"policy.base": 77}}));
    assert_eq!(status, 200, "{last}");
    let s = get_json(a, "/api/state?wait=170");
    assert_eq!(s["complete"], true, "{s}");
    assert_eq!(s["current"]["sets"], json!(["policy.base=77.0"]));
    // The stale moves were cancelled, not run: 2 workers finishing 101
    // settings of 3 seeds each would take far longer than the last alone.
    let cur = run_summary(dir.path(), 7, &["policy.base=77.0".into()]);
    assert_eq!(
        s["per_seed"][0]["cur"]["metrics"]["wait_s.p90"].as_f64(),
        Some(at(&cur, "wait_s.p90"))
    );
    let tried = s["tried"].as_array().unwrap().len();
    assert!(
        tried < 40,
        "{tried} settings ran at least one seed of 101 asked"
    );
    assert!(started.elapsed() < Duration::from_secs(170));
    alive(a);
}

#[test]
fn a_bad_bind_address_or_seed_count_is_refused_with_exit_2() {
    let file = scenario("smoke.toml");
    let o = mmsim(&["serve", &file, "--bind", "localhost:80"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not an IP address"), "{}", stderr(&o));
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let o = mmsim(&["serve", &file, "--port", &port]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot listen on 127.0.0.1:"),
        "{}",
        stderr(&o)
    );
    let o = mmsim(&["serve", &file, "--seeds", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--seeds must be 1 to 64"),
        "{}",
        stderr(&o)
    );
}
