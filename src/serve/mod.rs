//! `mmsim serve`: a scenario behind a local what-if page, so a designer's
//! "what if the threshold were 0.6?" is a slider move, not a file edit, a
//! command and a report to open. The page (embedded, no network needed)
//! asks this server to rerun the scenario with the changed keys on the
//! baseline's seeds and polls for the answer as seeds finish.
//!
//! Safe by default: bound to 127.0.0.1; no path from the page reaches the
//! file system (a page's values become `--set`s only through the control
//! list, saved files are named here, report files are served only when
//! they are in the listing of a report folder this server wrote); bodies,
//! settings, waiting polls and runs at once are bounded; a request never
//! takes the server down (each is answered inside `catch_unwind`).

mod answer;
mod controls;
mod http;
mod runs;

use crate::cli::CliError;
use crate::scenario::LoadedScenario;
use controls::Control;
use runs::Runs;
use serde_json::{json, Value};
use std::io::Write as _;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const INDEX_HTML: &str = include_str!("page/index.html");
const APP_JS: &str = include_str!("page/app.js");
const STYLE_CSS: &str = include_str!("page/style.css");

/// The largest request body: a page's values are a few hundred bytes.
pub const MAX_BODY: usize = 64 * 1024;
/// Requests handled at once, each on its own thread: a client that sends
/// half a body holds one until it goes, and past this many the next gets
/// 503 at once instead of the server growing threads without end.
const MAX_ACTIVE: usize = 64;
/// Long polls (`/api/state?wait=S`) waiting at once, so they never hold
/// most of the handlers.
const MAX_WAITING_POLLS: usize = 3;
/// The longest a long poll waits.
const MAX_POLL_S: u64 = 120;
/// Most seeds per setting.
pub const MAX_SEEDS: u32 = 64;

/// `mmsim serve`'s arguments.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// The scenario to serve.
    pub scenario: PathBuf,
    /// Port to listen on (0: any free port; the address is printed).
    #[arg(long, default_value = "8080", allow_negative_numbers = true, value_parser = crate::cli::whole::<u16>)]
    pub port: u16,
    /// Address to listen on: 127.0.0.1 keeps the page on this machine.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: String,
    /// Seeds per setting (default: the scenario's run.replications, or
    /// 8 when that is 1).
    #[arg(long, allow_negative_numbers = true, value_parser = crate::cli::whole::<u32>)]
    pub seeds: Option<u32>,
    /// Runs at once (default: the machine's cores).
    #[arg(long, allow_negative_numbers = true, value_parser = crate::cli::whole::<usize>)]
    pub jobs: Option<usize>,
    /// Folder for full reports asked from the page (default
    /// output/serve/<scenario name>/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Override a scenario key for the whole session (the page's
    /// baseline), e.g. --set run.duration=2h (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
}

struct App {
    base: LoadedScenario,
    /// The command line's `--set`s, under every setting of the session.
    session_sets: Vec<String>,
    controls: Vec<Control>,
    runs: Arc<Runs>,
    /// The served scenario's folder, where "save" writes.
    dir: PathBuf,
    /// This server's own output folder: full reports go under it.
    out: PathBuf,
    /// The served scenario's least CPU per seed: a setting that would take
    /// far more is refused rather than queued for an afternoon.
    base_cpu_s: f64,
    report: Arc<Mutex<Reports>>,
    waiting_polls: AtomicUsize,
    /// Hosts a request may name (empty: any, when bound to all interfaces).
    hosts: Vec<String>,
    jobs: usize,
}

#[derive(Default)]
struct Reports {
    /// Folders written, by number (1, 2, ...).
    done: Vec<PathBuf>,
    running: bool,
    last: Value,
}

/// Starts the server and serves until the process is stopped.
pub fn serve(opts: Options) -> Result<(), CliError> {
    let base = crate::cli::load_scenario(&opts.scenario, &opts.sets, false)?;
    let reps = opts.seeds.unwrap_or(if base.scenario.run.replications > 1 {
        base.scenario.run.replications.min(MAX_SEEDS)
    } else {
        8
    });
    if reps == 0 || reps > MAX_SEEDS {
        return Err(CliError::BadInput(format!(
            "--seeds must be 1 to {MAX_SEEDS}, got {reps}"
        )));
    }
    let seeds = crate::tune::replicate::seeds(base.scenario.run.seed, reps);
    let jobs = opts
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .clamp(1, 64);
    let bind: std::net::IpAddr = opts.bind.parse().map_err(|_| {
        CliError::BadInput(format!(
            "--bind {}: not an IP address (e.g. 127.0.0.1, or 0.0.0.0 for every interface)",
            opts.bind
        ))
    })?;
    let dir = match opts.scenario.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let out = opts.out.unwrap_or_else(|| {
        Path::new("output")
            .join("serve")
            .join(&base.scenario.run.name)
    });
    let listener = std::net::TcpListener::bind((bind, opts.port))
        .map_err(|e| CliError::BadInput(format!("cannot listen on {bind}:{}: {e}", opts.port)))?;
    let addr = listener
        .local_addr()
        .map_err(|e| CliError::BadInput(format!("the server has no address: {e}")))?;
    #[cfg(unix)]
    // SAFETY: SIG_IGN installs no handler code. A browser that closes its
    // connection mid-answer must give a write error, not SIGPIPE's exit.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let hosts = if bind.is_unspecified() {
        Vec::new()
    } else {
        let port = addr.port();
        let mut h = vec![addr.to_string(), format!("localhost:{port}")];
        if bind.is_loopback() {
            h.push(format!("127.0.0.1:{port}"));
            h.push(format!("[::1]:{port}"));
        }
        h
    };
    let base_cpu_s = crate::scenario::Budget::of(&base.scenario).min_cpu_s;
    let runs = Runs::new(base.clone(), seeds.clone());
    runs.start(jobs);
    let app = Arc::new(App {
        controls: controls::controls(&base),
        session_sets: opts.sets.clone(),
        dir,
        out,
        base,
        runs,
        base_cpu_s,
        report: Arc::new(Mutex::new(Reports::default())),
        waiting_polls: AtomicUsize::new(0),
        hosts,
        jobs,
    });
    let shown = if bind.is_unspecified() {
        format!("http://127.0.0.1:{}/", addr.port())
    } else {
        format!("http://{addr}/")
    };
    let line = format!(
        "mmsim serve: {} at {shown} (listening on {addr}; seeds {}..{}, {jobs} runs at once); Ctrl-C stops",
        app.base.scenario.run.name,
        seeds[0],
        seeds[seeds.len() - 1]
    );
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(crate::cli::stdout_failed)?;
    }
    let active = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else {
            // A connection that failed before it was accepted (or no file
            // descriptor left): wait a moment, take the next.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        if active.fetch_add(1, Ordering::SeqCst) >= MAX_ACTIVE {
            active.fetch_sub(1, Ordering::SeqCst);
            http::respond(
                &mut stream,
                503,
                &[("Content-Type", "text/plain; charset=utf-8")],
                b"busy: too many requests at once",
                false,
                false,
            );
            continue;
        }
        let app = Arc::clone(&app);
        let done = Arc::clone(&active);
        let spawned = std::thread::Builder::new().spawn(move || {
            connection(&app, stream);
            done.fetch_sub(1, Ordering::SeqCst);
        });
        if spawned.is_err() {
            // No thread to be had: the connection is dropped (its client
            // sees it close) and the server goes on.
            active.fetch_sub(1, Ordering::SeqCst);
        }
    }
    Ok(())
}

/// A reply before it is written.
struct Reply {
    status: u16,
    content_type: &'static str,
    body: Vec<u8>,
    allow: Option<&'static str>,
}

impl Reply {
    fn json(status: u16, v: &Value) -> Reply {
        Reply {
            status,
            content_type: "application/json; charset=utf-8",
            body: serde_json::to_vec(v).unwrap_or_default(),
            allow: None,
        }
    }
    fn error(status: u16, message: &str) -> Reply {
        Reply::json(status, &json!({"ok": false, "error": message}))
    }
    fn bytes(content_type: &'static str, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status: 200,
            content_type,
            body: body.into(),
            allow: None,
        }
    }
    fn method_not_allowed(allow: &'static str) -> Reply {
        let mut r = Reply::error(405, &format!("method not allowed here; use {allow}"));
        r.allow = Some(allow);
        r
    }
}

/// One connection: one request read, answered, closed.
fn connection(app: &App, mut stream: TcpStream) {
    let rq = match http::read_request(&mut stream, MAX_BODY) {
        Ok(rq) => rq,
        Err(http::ReadError::Gone) => return,
        Err(http::ReadError::Answer(status, message)) => {
            let body =
                serde_json::to_vec(&json!({"ok": false, "error": message})).unwrap_or_default();
            http::respond(
                &mut stream,
                status,
                &[("Content-Type", "application/json; charset=utf-8")],
                &body,
                false,
                true,
            );
            return;
        }
    };
    let reply = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| route(app, &rq)))
        .unwrap_or_else(|_| Reply::error(500, "internal error; the server goes on"));
    let mut headers = vec![
        ("Content-Type", reply.content_type),
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
        (
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
        ),
    ];
    if let Some(allow) = reply.allow {
        headers.push(("Allow", allow));
    }
    // A browser that went away gets nothing; the server goes on.
    http::respond(
        &mut stream,
        reply.status,
        &headers,
        &reply.body,
        rq.method == "HEAD",
        rq.body_too_large,
    );
}

/// The request's JSON body (at most `MAX_BODY` bytes, read already).
fn body_json(rq: &http::Request) -> Result<Value, Reply> {
    if rq.body_too_large {
        return Err(Reply::error(
            413,
            &format!("the body is larger than {MAX_BODY} bytes"),
        ));
    }
    let json_type = rq
        .header("Content-Type")
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("application/json"));
    if !json_type {
        // A cross-site form cannot send this type without the browser
        // asking first, which this server never allows.
        return Err(Reply::error(415, "send the body as application/json"));
    }
    if rq.body.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    serde_json::from_slice(&rq.body)
        .map_err(|e| Reply::error(400, &format!("the body is not JSON: {e}")))
}

fn route(app: &App, rq: &http::Request) -> Reply {
    if !app.hosts.is_empty() {
        let host = rq.header("Host").map(str::to_string);
        if !host.is_some_and(|h| app.hosts.contains(&h)) {
            // Another name for this address is how a foreign page would
            // reach a local server (DNS rebinding).
            return Reply::error(421, "this server answers only to its own address");
        }
    }
    let url = rq.target.as_str();
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let get = rq.method == "GET" || rq.method == "HEAD";
    let post = rq.method == "POST";
    match path {
        "/" | "/index.html" if get => Reply::bytes("text/html; charset=utf-8", INDEX_HTML),
        "/app.js" if get => Reply::bytes("text/javascript; charset=utf-8", APP_JS),
        "/style.css" if get => Reply::bytes("text/css; charset=utf-8", STYLE_CSS),
        "/" | "/index.html" | "/app.js" | "/style.css" => Reply::method_not_allowed("GET"),
        "/api/controls" if get => Reply::json(200, &controls_json(app)),
        "/api/state" if get => {
            if let Some(secs) = query_param(query, "wait").and_then(|v| v.parse::<u64>().ok()) {
                long_poll(app, secs);
            }
            Reply::json(200, &with_report(app, answer::state(&app.runs)))
        }
        "/api/plot/cdf.svg" if get => svg(answer::cdf_svg(&app.runs)),
        "/api/plot/plane.svg" if get => svg(answer::plane_svg(&app.runs)),
        "/api/try" if post => match body_json(rq) {
            Ok(v) => try_setting(app, &v),
            Err(r) => r,
        },
        "/api/pin" if post => match body_json(rq) {
            Ok(_) => Reply::json(200, &json!({"ok": true, "baseline": app.runs.pin()})),
            Err(r) => r,
        },
        "/api/save" if post => match body_json(rq) {
            Ok(_) => save(app),
            Err(r) => r,
        },
        "/api/report" if post => match body_json(rq) {
            Ok(_) => start_report(app),
            Err(r) => r,
        },
        "/api/report" if get => Reply::json(200, &report_json(app)),
        "/api/controls" | "/api/state" | "/api/plot/cdf.svg" | "/api/plot/plane.svg" => {
            Reply::method_not_allowed("GET")
        }
        "/api/try" | "/api/pin" | "/api/save" => Reply::method_not_allowed("POST"),
        "/api/report" => Reply::method_not_allowed("GET, POST"),
        p if p.starts_with("/report/") => {
            if get {
                report_file(app, &p["/report/".len()..])
            } else {
                Reply::method_not_allowed("GET")
            }
        }
        _ => Reply::error(404, "no such page"),
    }
}

fn query_param<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

fn svg(made: anyhow::Result<String>) -> Reply {
    match made {
        Ok(s) => Reply::bytes("image/svg+xml", s),
        Err(e) => Reply::error(500, &format!("the plot could not be drawn: {e:#}")),
    }
}

/// Waits for the whole answer, unless too many polls already wait (then
/// the answer is the state as it is: the page polls again).
fn long_poll(app: &App, secs: u64) {
    let n = app.waiting_polls.fetch_add(1, Ordering::SeqCst);
    if n < MAX_WAITING_POLLS {
        app.runs
            .wait_complete(Duration::from_secs(secs.min(MAX_POLL_S)));
    }
    app.waiting_polls.fetch_sub(1, Ordering::SeqCst);
}

fn controls_json(app: &App) -> Value {
    let s = &app.base.scenario;
    json!({
        "scenario": s.run.name,
        "file": app.base.path.file_name().map(|f| f.to_string_lossy().into_owned()),
        "policy": s.policy.name(),
        "format": format!("{}v{}{}", s.format.team_size, s.format.team_size,
            if s.format.teams > 2 { format!(" ({} teams)", s.format.teams) } else { String::new() }),
        "duration_s": s.run.duration.secs(),
        "seeds": app.runs.seeds,
        "jobs": app.jobs,
        "controls": app.controls,
        "plane": answer::PLANE,
    })
}

fn try_setting(app: &App, body: &Value) -> Reply {
    let Some(values) = body.get("values").and_then(Value::as_object) else {
        return Reply::error(
            400,
            "send {\"values\": {\"policy.KEY\": number, ...}} with the controls' keys",
        );
    };
    let sets = match controls::set_args(&app.controls, values) {
        Ok(s) => s,
        Err(errors) => return Reply::json(422, &json!({"ok": false, "errors": errors})),
    };
    let loaded = match app.base.with_sets(&sets) {
        Ok(l) => l,
        Err(e) => {
            let (key, message) = controls::blame(&e, &app.controls);
            return Reply::json(422, &json!({"ok": false, "errors": {key: message}}));
        }
    };
    let cpu = crate::scenario::Budget::of(&loaded.scenario).min_cpu_s;
    let limit = (app.base_cpu_s * 20.0).max(60.0);
    if cpu > limit {
        return Reply::json(
            422,
            &json!({"ok": false, "errors": {"": format!(
                "this setting would take at least {cpu:.0} s of CPU per seed (the served scenario {:.0} s); the page allows {limit:.0} s: use `mmsim run` for it",
                app.base_cpu_s
            )}}),
        );
    }
    match app.runs.try_setting(sets.clone(), values.clone(), loaded) {
        Some(id) => Reply::json(
            200,
            &json!({"ok": true, "setting": id, "sets": sets, "generation": app.runs.generation()}),
        ),
        None => Reply::error(
            503,
            &format!(
                "this server has tried {} settings, its most; restart it to go on",
                runs::MAX_SETTINGS
            ),
        ),
    }
}

/// Writes the current setting as a new scenario file beside the served
/// one, named here (`NAME-serve-K.toml`, the first free K): the page
/// chooses nothing of the path.
fn save(app: &App) -> Reply {
    let (sets, loaded) = {
        let st = app.runs.lock();
        let s = &st.settings[st.current];
        (s.sets.clone(), Arc::clone(&s.loaded))
    };
    let stem = app
        .base
        .path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".into());
    let text = saved_text(app, &sets, &loaded);
    match crate::cli::write_new_file(&app.dir, &format!("{stem}-serve"), "toml", text.as_bytes()) {
        Ok(path) => {
            let name = path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            Reply::json(200, &json!({"ok": true, "file": name, "sets": sets}))
        }
        Err(e) => Reply::error(500, &format!("could not save: {e:#}")),
    }
}

/// The served file's text with the session's and the setting's keys
/// changed in place (comments and layout kept), checked by loading it back:
/// if it does not load to the same scenario (the file changed meanwhile, a
/// key the file does not write), the loader's own text of the setting is
/// saved instead.
fn saved_text(app: &App, sets: &[String], loaded: &LoadedScenario) -> String {
    let all: Vec<String> = app.session_sets.iter().chain(sets).cloned().collect();
    let head = if all.is_empty() {
        "# Saved by `mmsim serve`: the served scenario unchanged.\n".to_string()
    } else {
        format!("# Saved by `mmsim serve` with: {}\n", all.join(", "))
    };
    let want = crate::scenario::provenance::scenario_sha256(&loaded.scenario);
    let source = crate::scenario::read_bounded(&app.base.path, crate::scenario::MAX_SCENARIO_BYTES);
    if let Some(edited) = source.ok().and_then(|t| edit_in_place(&t, &all)) {
        let again = crate::scenario::from_text(&edited, &app.base.path, &[]);
        if again.is_ok_and(|l| crate::scenario::provenance::scenario_sha256(&l.scenario) == want) {
            return head + &edited;
        }
    }
    head + &loaded.text
}

fn edit_in_place(text: &str, sets: &[String]) -> Option<String> {
    let mut doc: toml_edit::DocumentMut = text.parse().ok()?;
    for arg in sets {
        let (key, raw) = arg.split_once('=')?;
        // As `--set` reads it: TOML, or else the text as a string.
        let value: toml_edit::Value = raw
            .trim()
            .parse()
            .unwrap_or_else(|_| toml_edit::Value::from(raw.trim()));
        let parts: Vec<&str> = key.split('.').map(str::trim).collect();
        if !set_in(doc.as_table_mut(), &parts, value) {
            return None;
        }
    }
    Some(doc.to_string())
}

fn set_in(t: &mut dyn toml_edit::TableLike, parts: &[&str], value: toml_edit::Value) -> bool {
    match parts {
        [] => false,
        [last] => {
            let mut value = value;
            // Keep the old value's spacing and trailing comment.
            if let Some(old) = t.get(last).and_then(|i| i.as_value()) {
                *value.decor_mut() = old.decor().clone();
            }
            t.insert(last, toml_edit::Item::Value(value));
            true
        }
        [head, rest @ ..] => match t.get_mut(head).and_then(|i| i.as_table_like_mut()) {
            Some(sub) => set_in(sub, rest, value),
            None => false,
        },
    }
}

/// Runs the current setting on the first seed with every output (tables
/// aside) into a new folder under this server's own output folder, in the
/// background; one at a time.
fn start_report(app: &App) -> Reply {
    let (loaded, setting) = {
        let st = app.runs.lock();
        (Arc::clone(&st.settings[st.current].loaded), st.current)
    };
    let mut reports = app.report.lock().unwrap_or_else(|p| p.into_inner());
    if reports.running {
        return Reply::error(409, "a report is being written; wait for it");
    }
    let number = reports.done.len() + 1;
    let dir = app.out.join(format!("report-{number}"));
    let seed = app.runs.seeds[0];
    let loaded = match loaded.with_run(seed, Some(1)) {
        Ok(l) => l,
        Err(e) => return Reply::error(500, &e.to_string()),
    };
    reports.running = true;
    reports.last = json!({"state": "running", "setting": setting, "seed": seed});
    drop(reports);
    let slot = Arc::clone(&app.report);
    std::thread::spawn(move || {
        let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crate::cli::write_full_run(&loaded, &dir)
        }));
        let mut r = slot.lock().unwrap_or_else(|p| p.into_inner());
        r.running = false;
        r.last = match done {
            Ok(Ok(())) => {
                r.done.push(dir);
                json!({"state": "done", "setting": setting, "seed": seed,
                       "url": format!("/report/{}/report.html", r.done.len())})
            }
            Ok(Err(e)) => json!({"state": "failed", "setting": setting, "message": e.to_string()}),
            Err(_) => json!({"state": "failed", "setting": setting, "message": "the run failed"}),
        };
    });
    Reply::json(
        202,
        &json!({"ok": true, "state": "running", "setting": setting, "seed": seed}),
    )
}

fn report_json(app: &App) -> Value {
    let r = app.report.lock().unwrap_or_else(|p| p.into_inner());
    if r.last.is_null() {
        json!({"state": "idle"})
    } else {
        r.last.clone()
    }
}

fn with_report(app: &App, mut state: Value) -> Value {
    if let Value::Object(m) = &mut state {
        m.insert("report".into(), report_json(app));
    }
    state
}

/// Every file under `dir` (two levels), by its relative name with `/`,
/// hidden names left out.
fn listing(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_file() {
            out.push((name, e.path()));
        } else if kind.is_dir() {
            for f in std::fs::read_dir(e.path()).into_iter().flatten().flatten() {
                let sub = f.file_name().to_string_lossy().into_owned();
                if !sub.starts_with('.') && f.file_type().is_ok_and(|k| k.is_file()) {
                    out.push((format!("{name}/{sub}"), f.path()));
                }
            }
        }
    }
    out
}

/// `/report/N/NAME`: a file of report N, served only when NAME is one of
/// the names its folder lists (so `..`, absolute paths and encodings never
/// reach the file system) and of a type a report holds.
fn report_file(app: &App, rest: &str) -> Reply {
    let not_found = || Reply::error(404, "no such report file");
    let Some((n, name)) = rest.split_once('/') else {
        return not_found();
    };
    let Ok(n) = n.parse::<usize>() else {
        return not_found();
    };
    let dir = {
        let r = app.report.lock().unwrap_or_else(|p| p.into_inner());
        match n.checked_sub(1).and_then(|i| r.done.get(i)) {
            Some(d) => d.clone(),
            None => return not_found(),
        }
    };
    let content_type = match name.rsplit_once('.').map(|x| x.1) {
        Some("html") => "text/html; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("json") => "application/json; charset=utf-8",
        Some("toml") => "text/plain; charset=utf-8",
        _ => return not_found(),
    };
    let Some((_, path)) = listing(&dir).into_iter().find(|(listed, _)| listed == name) else {
        return not_found();
    };
    match std::fs::read(&path) {
        Ok(bytes) => Reply::bytes(content_type, bytes),
        Err(_) => not_found(),
    }
}
