//! Trace files: captured tickets, one CSV row per player per ticket, read
//! into the engine's `Trace` with errors naming the line and the column, and
//! written back from a run's own tickets (`mmsim trace`). The columns are
//! documented in docs/scenarios.md ("Replaying a trace").

use super::{Patience, Scenario};
use mmsim_core::engine::{LoggedMember, Trace, TracePlayer, TraceRoles, TraceTicket};
use mmsim_core::model::{ParamError, Party, SimDuration, SimTime, TicketId};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The largest trace file read, and the most rows in it: a day of a busy
/// queue fits; a wrong path to a huge file stops at the limit.
pub const MAX_TRACE_BYTES: u64 = 256 << 20;
pub const MAX_TRACE_ROWS: usize = 2_000_000;
/// A simulated year, the longest run allowed.
const MAX_TRACE_TIME_S: f64 = 365.0 * 86_400.0;

/// The columns every trace may have, in the order `mmsim trace` writes them;
/// `region`, one `ping_ms_<data centre>` per data centre and `roles` follow
/// when the scenario has `[regions]` or `[roles]`.
pub const COLUMNS: [&str; 7] = [
    "time_s",
    "ticket",
    "player",
    "rating",
    "true_skill",
    "abandon_s",
    "requeue",
];
const REQUIRED: [&str; 4] = ["time_s", "ticket", "player", "rating"];
/// A player's home region, by the name `[[regions.homes]]` gives it.
pub const REGION: &str = "region";
/// A player's roles, `|`-separated, main role first.
pub const ROLES: &str = "roles";
/// A player's ping to one data centre: `ping_ms_` and its name.
pub const PING_PREFIX: &str = "ping_ms_";

/// What a trace's optional columns are read against: the match size, and
/// the scenario's data centres, homes and roles (a column for a section the
/// scenario lacks is refused, not ignored: it would silently be replaced by
/// draws).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Context {
    pub team_size: usize,
    /// `[regions]`: the data centres' and the homes' names; `None` without it.
    pub regions: Option<(Vec<String>, Vec<String>)>,
    /// `[roles] names`; `None` without `[roles]`.
    pub roles: Option<Vec<String>>,
}

impl Context {
    pub fn of(s: &Scenario) -> Context {
        Context {
            team_size: s.format.team_size as usize,
            regions: s.regions.as_ref().map(|r| {
                (
                    r.data_centres.clone(),
                    r.homes.iter().map(|h| h.name.clone()).collect(),
                )
            }),
            roles: s.roles.as_ref().map(|r| r.names.clone()),
        }
    }

    /// No regions and no roles.
    pub fn plain(team_size: usize) -> Context {
        Context {
            team_size,
            ..Context::default()
        }
    }
}

/// The keys a trace replaces: a scenario with a trace may not set them
/// (their defaults are accepted, as if absent).
pub fn validate(s: &Scenario) -> Result<(), ParamError> {
    let refuse = |key: &str, why: &str| {
        Err(ParamError::new(
            key,
            format!("cannot be set with arrivals.trace: {why}"),
        ))
    };
    let from_trace = "the trace gives the players, their first ratings and true skills";
    let arrivals = "the trace gives every arrival; remove it";
    let p = &s.population;
    if p.size != 0 {
        return refuse("population.size", from_trace);
    }
    if p.skill.is_some() {
        return refuse("population.skill", from_trace);
    }
    if p.initial_rating.is_some() {
        return refuse("population.initial_rating", from_trace);
    }
    let a = &s.arrivals;
    if a.rate_per_s != 0.0 {
        return refuse("arrivals.rate_per_s", arrivals);
    }
    if a.daily_profile.is_some() {
        return refuse("arrivals.daily_profile", arrivals);
    }
    if a.party_sizes != [1.0] {
        return refuse(
            "arrivals.party_sizes",
            "the trace gives each ticket's party; remove it",
        );
    }
    if a.patience != Patience::default() {
        return refuse(
            "arrivals.patience",
            "each ticket's abandon time is the trace's `abandon_s` column (empty: it never abandons); remove it",
        );
    }
    if a.requeue_prob != 0.0 {
        return refuse(
            "arrivals.requeue_prob",
            "a trace already holds the returns after matches, as tickets of their own; remove it",
        );
    }
    if a.think_time.0 != SimDuration::from_secs(30) {
        return refuse(
            "arrivals.think_time",
            "the trace's return tickets carry their own times; remove it",
        );
    }
    if a.trace.as_deref().is_some_and(|t| t.trim().is_empty()) {
        return Err(ParamError::new("arrivals.trace", "must name a file"));
    }
    Ok(())
}

/// Reads the trace `s` names (relative to the scenario file at `path`)
/// into `s`, or keeps `before`'s when it named the same file (a sweep's
/// settings share one read). Errors name the file, line and column.
pub fn attach(s: &mut Scenario, before: &Scenario, path: &Path) -> Result<(), ParamError> {
    let Some(file) = s.arrivals.trace.clone() else {
        return Ok(());
    };
    let ctx = Context::of(s);
    if before.arrivals.trace.as_ref() == Some(&file)
        && before.arrivals.trace_data.is_some()
        && Context::of(before) == ctx
    {
        s.arrivals.trace_data = before.arrivals.trace_data.clone();
        s.arrivals.trace_sha256 = before.arrivals.trace_sha256.clone();
        return Ok(());
    }
    let full = path.parent().unwrap_or(Path::new(".")).join(&file);
    let (trace, sha) = read(&full, &ctx)
        .map_err(|e| ParamError::new("arrivals.trace", format!("{}: {e}", full.display())))?;
    if trace.players.len() < (s.format.teams * s.format.team_size) as usize {
        return Err(ParamError::new(
            "arrivals.trace",
            format!(
                "{}: has {} players but a match needs {}",
                full.display(),
                trace.players.len(),
                s.format.teams * s.format.team_size
            ),
        ));
    }
    s.arrivals.trace_data = Some(std::sync::Arc::new(trace));
    s.arrivals.trace_sha256 = Some(sha);
    Ok(())
}

/// What is wrong with a trace file: the 1-based line and, for a bad value,
/// its column.
#[derive(Debug, PartialEq)]
pub struct TraceError {
    /// A CSV file's line, or a Parquet file's 1-based row (`None` for a
    /// Parquet file's columns, which have no row).
    pub line: Option<usize>,
    pub column: Option<String>,
    pub message: String,
    /// Read from Parquet: `line` is a row number.
    pub parquet: bool,
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let word = if self.parquet { "row" } else { "line" };
        match (self.line, &self.column) {
            (Some(l), Some(c)) => write!(f, "{word} {l}, column `{c}`: ")?,
            (Some(l), None) => write!(f, "{word} {l}: ")?,
            (None, Some(c)) => write!(f, "column `{c}`: ")?,
            (None, None) => {}
        }
        write!(f, "{}", self.message)
    }
}

fn err(line: usize, column: Option<&str>, message: impl Into<String>) -> TraceError {
    TraceError {
        line: Some(line),
        column: column.map(str::to_owned),
        message: message.into(),
        parquet: false,
    }
}

/// Where a header error points: the CSV's first line, or no row in Parquet.
fn header_err(line: Option<usize>, column: Option<&str>, message: impl Into<String>) -> TraceError {
    TraceError {
        line,
        ..err(0, column, message)
    }
}

/// Reads a Parquet trace's bytes into its column names and its rows as
/// text (numbers in Rust's shortest round-trip form, nulls empty), for
/// the same parser CSV goes through. Polars lives in `report/`, which sits
/// above this module, so the binary installs its reader here at start-up.
pub type ParquetRows = fn(&[u8], usize) -> Result<ParquetTable, ParquetRowsError>;
/// Why a Parquet file's bytes are not a trace's rows: what is wrong with the
/// file (the caller names it).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ParquetRowsError(pub String);

impl From<String> for ParquetRowsError {
    fn from(message: String) -> Self {
        ParquetRowsError(message)
    }
}
/// A Parquet trace's column names and rows of text.
pub type ParquetTable = (Vec<String>, Box<dyn Iterator<Item = Vec<String>>>);
static PARQUET_ROWS: std::sync::OnceLock<ParquetRows> = std::sync::OnceLock::new();

/// Installs the Parquet reader (`report::trace_file::rows`); later calls keep the first.
pub fn read_parquet_with(reader: ParquetRows) {
    let _ = PARQUET_ROWS.set(reader);
}

/// The installed Parquet reader, if the binary installed one.
pub fn parquet_rows() -> Option<ParquetRows> {
    PARQUET_ROWS.get().copied()
}

/// Whether `path` names a Parquet file (by its extension).
pub fn is_parquet(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

/// Reads a trace file (Parquet by a `.parquet` extension, else CSV) for
/// the scenario `ctx` describes, with the SHA-256 of its bytes (hex).
pub fn read(path: &Path, ctx: &Context) -> Result<(Trace, String), TraceError> {
    use sha2::{Digest, Sha256};
    let cannot = |e: std::io::Error| TraceError {
        line: None,
        column: None,
        message: format!("cannot read {}: {e}", path.display()),
        parquet: false,
    };
    if is_parquet(path) {
        let bytes = read_bytes_bounded(path, MAX_TRACE_BYTES).map_err(cannot)?;
        let sha = super::provenance::hex(&Sha256::digest(&bytes));
        let plain = |message: String| TraceError {
            line: None,
            column: None,
            message,
            parquet: true,
        };
        let reader = PARQUET_ROWS.get().ok_or_else(|| {
            plain("Parquet traces are read by the mmsim command; give a CSV trace here".into())
        })?;
        let (header, rows) = reader(&bytes, MAX_TRACE_ROWS).map_err(|e| plain(e.0))?;
        let rows = rows.enumerate().map(|(i, r)| Ok((i + 1, r)));
        let trace =
            parse_rows(header, None, rows, ctx).map_err(|e| TraceError { parquet: true, ..e })?;
        return Ok((trace, sha));
    }
    let text = super::read_bounded(path, MAX_TRACE_BYTES).map_err(cannot)?;
    let sha = super::provenance::hex(&Sha256::digest(text.as_bytes()));
    Ok((parse(&text, ctx)?, sha))
}

pub(super) fn read_bytes_bounded(path: &Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(max_bytes + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("the file is larger than the {} MB allowed", max_bytes >> 20),
        ));
    }
    Ok(bytes)
}

/// Splits one CSV line into fields; a field may be double-quoted (with `""`
/// for a quote inside), so player ids may hold commas.
pub fn fields(line: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut was_quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => cur.push(c),
            (false, '"') if cur.is_empty() && !was_quoted => {
                quoted = true;
                was_quoted = true;
            }
            (false, ',') => {
                out.push(std::mem::take(&mut cur));
                was_quoted = false;
            }
            (false, c) => {
                if was_quoted {
                    return None;
                }
                cur.push(c)
            }
        }
    }
    if quoted {
        return None;
    }
    out.push(cur);
    Some(out)
}

/// One ticket while it is read: its first line and its rows' values.
struct Open {
    key: String,
    line: usize,
    at: SimTime,
    at_text: String,
    abandon: Option<SimDuration>,
    requeue: bool,
    members: Party,
}

/// Parses a CSV trace for the scenario `ctx` describes.
pub fn parse(text: &str, ctx: &Context) -> Result<Trace, TraceError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')));
    let Some((_, header)) = lines.next() else {
        return Err(err(
            1,
            None,
            "the trace is empty: it needs a header line naming its columns",
        ));
    };
    let header = fields(header).ok_or_else(|| err(1, None, "unbalanced quotes in the header"))?;
    let rows = lines
        .filter(|(_, raw)| !raw.trim().is_empty())
        .map(|(line, raw)| {
            fields(raw)
                .map(|f| (line, f))
                .ok_or_else(|| err(line, None, "unbalanced quotes"))
        });
    parse_rows(header, Some(1), rows, ctx)
}

/// Where each column is: the required and plain ones by name, and the
/// optional player columns the scenario allows.
struct Layout<'a> {
    col: BTreeMap<&'a str, usize>,
    region: Option<usize>,
    /// One per data centre, in `[regions]` order, or none at all.
    pings: Vec<usize>,
    roles: Option<usize>,
}

fn layout<'a>(
    header: &'a [String],
    header_line: Option<usize>,
    ctx: &Context,
) -> Result<Layout<'a>, TraceError> {
    let bad = |c: &str, m: String| header_err(header_line, Some(c), m);
    let mut col: BTreeMap<&str, usize> = BTreeMap::new();
    let mut region = None;
    let mut roles = None;
    let mut pings: BTreeMap<usize, usize> = BTreeMap::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for (i, name) in header.iter().enumerate() {
        let name = name.trim();
        if !seen.insert(name) {
            return Err(bad(name, "named twice".into()));
        }
        if let Some(&known) = COLUMNS.iter().find(|c| **c == name) {
            col.insert(known, i);
        } else if name == REGION || name.starts_with(PING_PREFIX) {
            let Some((dcs, _)) = &ctx.regions else {
                return Err(bad(
                    name,
                    "needs a [regions] section in the scenario: a trace's homes and pings replace the players' drawn ones; add [regions] or remove the column".into(),
                ));
            };
            if name == REGION {
                region = Some(i);
            } else {
                let dc = &name[PING_PREFIX.len()..];
                let Some(d) = dcs.iter().position(|x| x == dc) else {
                    return Err(bad(
                        name,
                        format!(
                            "names no data centre; [regions] data_centres are {}",
                            dcs.join(", ")
                        ),
                    ));
                };
                pings.insert(d, i);
            }
        } else if name == ROLES {
            if ctx.roles.is_none() {
                return Err(bad(
                    name,
                    "needs a [roles] section in the scenario: a trace's roles replace the players' drawn ones; add [roles] or remove the column".into(),
                ));
            }
            roles = Some(i);
        } else {
            return Err(bad(
                name,
                format!(
                    "unknown column; a trace has {}, and with [regions] `region` and `ping_ms_<data centre>`, with [roles] `roles`",
                    COLUMNS.join(", ")
                ),
            ));
        }
    }
    for r in REQUIRED {
        if !col.contains_key(r) {
            return Err(bad(
                r,
                format!("is missing; required columns: {}", REQUIRED.join(", ")),
            ));
        }
    }
    if let (Some((dcs, _)), false) = (&ctx.regions, pings.is_empty()) {
        if let Some(dc) = (0..dcs.len()).find(|d| !pings.contains_key(d)) {
            return Err(bad(
                &format!("{PING_PREFIX}{}", dcs[dc]),
                "is missing: a trace with ping columns has one for every data centre of [regions]"
                    .into(),
            ));
        }
    }
    Ok(Layout {
        col,
        region,
        pings: pings.into_values().collect(),
        roles,
    })
}

/// A player's home, pings and roles as one row gives them.
#[derive(PartialEq)]
struct Attributes {
    home: Option<u16>,
    pings_ms: Vec<u16>,
    roles: Option<TraceRoles>,
}

fn attributes(
    f: &[String],
    line: usize,
    at: &Layout,
    header: &[String],
    ctx: &Context,
) -> Result<Attributes, TraceError> {
    let cell = |i: usize| f[i].trim();
    let name = |i: usize| header[i].trim();
    let home = match at.region.map(|i| (i, cell(i))) {
        None | Some((_, "")) => None,
        Some((i, v)) => {
            let homes = &ctx.regions.as_ref().expect("checked with the header").1;
            let h = homes.iter().position(|x| x == v).ok_or_else(|| {
                err(
                    line,
                    Some(name(i)),
                    format!(
                        "unknown region {v:?}; [[regions.homes]] names are {}",
                        homes.join(", ")
                    ),
                )
            })?;
            Some(h as u16)
        }
    };
    let mut pings_ms = Vec::new();
    if at.pings.iter().any(|&i| !cell(i).is_empty()) {
        for &i in &at.pings {
            let v = cell(i);
            if v.is_empty() {
                return Err(err(
                    line,
                    Some(name(i)),
                    "is empty while the row's other ping columns are set: give every data centre's ping or none",
                ));
            }
            let max = f64::from(mmsim_core::engine::regions::MAX_PING_MS);
            match v.parse::<f64>() {
                Ok(x) if (0.0..=max).contains(&x) => pings_ms.push(x.round() as u16),
                _ => {
                    return Err(err(
                        line,
                        Some(name(i)),
                        format!("a ping in milliseconds from 0 to {max}, got {v:?}"),
                    ))
                }
            }
        }
    }
    let roles = match at.roles.map(|i| (i, cell(i))) {
        None | Some((_, "")) => None,
        Some((i, v)) => {
            let names = ctx.roles.as_ref().expect("checked with the header");
            let mut main = None;
            let mut mask = 0u8;
            for role in v.split('|').map(str::trim) {
                let Some(r) = names.iter().position(|x| x == role) else {
                    return Err(err(
                        line,
                        Some(name(i)),
                        format!(
                            "unknown role {role:?}; roles are {} (several as `{}`, main role first)",
                            names.join(", "),
                            names[..names.len().min(2)].join("|")
                        ),
                    ));
                };
                if mask & (1 << r) != 0 {
                    return Err(err(line, Some(name(i)), format!("names {role:?} twice")));
                }
                main.get_or_insert(r as u8);
                mask |= 1 << r;
            }
            main.map(|main| TraceRoles { main, mask })
        }
    };
    Ok(Attributes {
        home,
        pings_ms,
        roles,
    })
}

/// Parses a trace's rows, each with its line (CSV) or row (Parquet)
/// number; `header_line` is where header errors point (`None`: Parquet).
/// Sorts a trace's rows by `time_s`, then `ticket` (`by_key`), stably:
/// a party's members keep the file's order, which is the party's own (the
/// order `mmsim trace` logged them in, which a replay must keep to form the
/// run's matches). Only when every row's time reads as a finite number;
/// otherwise it leaves them.
fn sort_by_time(rows: &mut [(usize, Vec<String>)], col: &BTreeMap<&str, usize>) {
    let (Some(&t), Some(&k)) = (col.get("time_s"), col.get("ticket")) else {
        return;
    };
    let time = |f: &[String]| {
        f.get(t)
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|x| x.is_finite())
    };
    if rows.iter().any(|(_, f)| time(f).is_none() || f.len() <= k) {
        return;
    }
    rows.sort_by(|(_, a), (_, b)| {
        time(a)
            .unwrap_or(0.0)
            .total_cmp(&time(b).unwrap_or(0.0))
            .then_with(|| by_key(&a[k], &b[k]))
    });
}

/// Ids in their natural order: as numbers when both are whole numbers
/// (ticket 9 before ticket 10, as a log numbers them), else as text.
fn by_key(a: &str, b: &str) -> std::cmp::Ordering {
    let (a, b) = (a.trim(), b.trim());
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        _ => a.cmp(b),
    }
}

pub fn parse_rows(
    header: Vec<String>,
    header_line: Option<usize>,
    rows: impl Iterator<Item = Result<(usize, Vec<String>), TraceError>>,
    ctx: &Context,
) -> Result<Trace, TraceError> {
    let team_size = ctx.team_size;
    let word = if header_line.is_some() { "line" } else { "row" };
    let at = layout(&header, header_line, ctx)?;
    let col = &at.col;
    let mut players: Vec<TracePlayer> = Vec::new();
    let mut first_line: Vec<usize> = Vec::new();
    let mut ids: BTreeMap<String, u32> = BTreeMap::new();
    let mut seen_tickets: BTreeSet<String> = BTreeSet::new();
    let mut tickets: Vec<TraceTicket> = Vec::new();
    let mut open: Option<Open> = None;
    let close = |o: Open, tickets: &mut Vec<TraceTicket>| {
        tickets.push(TraceTicket {
            at: o.at,
            members: o.members,
            abandon_after: o.abandon,
            requeue: o.requeue,
        });
    };
    // Every row first, then in time order, so that the order of the file's
    // tickets never changes a run: a player's first row by time gives their
    // facts and number, and tickets are numbered by time, ties by ticket
    // id. A party's members keep their order. A row whose time does not
    // read leaves the file's order as it is, and the loop below names it.
    let mut all: Vec<(usize, Vec<String>)> = Vec::new();
    for row in rows {
        let (line, f) = row?;
        if all.len() >= MAX_TRACE_ROWS {
            return Err(err(
                line,
                None,
                format!("a trace may have at most {MAX_TRACE_ROWS} rows"),
            ));
        }
        all.push((line, f));
    }
    sort_by_time(&mut all, col);
    for (line, f) in all {
        if f.len() != header.len() {
            return Err(err(
                line,
                None,
                format!(
                    "has {} fields but the header names {} columns",
                    f.len(),
                    header.len()
                ),
            ));
        }
        let get = |c: &str| col.get(c).map(|&i| f[i].trim());
        let number = |c: &str| -> Result<Option<f64>, TraceError> {
            match get(c) {
                None | Some("") => Ok(None),
                Some(v) => match v.parse::<f64>() {
                    Ok(x) if x.is_finite() => Ok(Some(x)),
                    _ => Err(err(
                        line,
                        Some(c),
                        format!("expected a finite number, got {v:?}"),
                    )),
                },
            }
        };
        let required = |c: &str| -> Result<f64, TraceError> {
            number(c)?.ok_or_else(|| err(line, Some(c), "is empty; every row needs it"))
        };
        let time_s = required("time_s")?;
        if time_s < 0.0 {
            return Err(err(
                line,
                Some("time_s"),
                format!("seconds from the run's start: must be 0 or more, got {time_s}"),
            ));
        }
        if time_s > MAX_TRACE_TIME_S {
            return Err(err(
                line,
                Some("time_s"),
                "is later than the longest run allowed",
            ));
        }
        let ticket = get("ticket").unwrap_or("").to_owned();
        if ticket.is_empty() {
            return Err(err(
                line,
                Some("ticket"),
                "is empty; rows of one ticket share a ticket id",
            ));
        }
        let player = get("player").unwrap_or("").to_owned();
        if player.is_empty() {
            return Err(err(line, Some("player"), "is empty"));
        }
        let rating = required("rating")?;
        let true_skill = number("true_skill")?.unwrap_or(rating);
        let abandon = match number("abandon_s")? {
            Some(x) if x < 0.0 => {
                return Err(err(
                    line,
                    Some("abandon_s"),
                    format!("seconds after arrival: must be 0 or more, got {x}"),
                ))
            }
            Some(x) => Some(SimDuration::from_secs_f64(x)),
            None => None,
        };
        let requeue = match get("requeue") {
            None | Some("") | Some("false") | Some("0") => false,
            Some("true") | Some("1") => true,
            Some(v) => {
                return Err(err(
                    line,
                    Some("requeue"),
                    format!("expected true, false, 1, 0 or empty, got {v:?}"),
                ))
            }
        };
        let attrs = attributes(&f, line, &at, &header, ctx)?;
        let next_id = players.len() as u32;
        let id = *ids.entry(player.clone()).or_insert(next_id);
        if id == next_id {
            players.push(TracePlayer {
                rating,
                true_skill,
                home: attrs.home,
                pings_ms: attrs.pings_ms,
                roles: attrs.roles,
            });
            first_line.push(line);
        } else {
            // A player's home, pings and roles are theirs, not the ticket's:
            // a later row may leave them empty, not change them.
            let p = &players[id as usize];
            let differs = if attrs.home.is_some() && attrs.home != p.home {
                at.region
            } else if !attrs.pings_ms.is_empty() && attrs.pings_ms != p.pings_ms {
                at.pings.first().copied()
            } else if attrs.roles.is_some() && attrs.roles != p.roles {
                at.roles
            } else {
                None
            };
            if let Some(i) = differs {
                return Err(err(
                    line,
                    Some(header[i].trim()),
                    format!(
                        "differs from {word} {}, player {player:?}'s first row: a player's region, pings and roles are fixed (leave later rows empty or the same)",
                        first_line[id as usize]
                    ),
                ));
            }
        }
        let id = mmsim_core::model::PlayerId(id);
        let at_text = get("time_s").unwrap_or("").to_owned();
        if let Some(o) = open.as_mut().filter(|o| o.key == ticket) {
            if at_text != o.at_text {
                return Err(err(
                    line,
                    Some("time_s"),
                    format!(
                        "differs from {word} {} of the same ticket {ticket:?}",
                        o.line
                    ),
                ));
            }
            if abandon != o.abandon || requeue != o.requeue {
                let c = if abandon != o.abandon {
                    "abandon_s"
                } else {
                    "requeue"
                };
                return Err(err(
                    line,
                    Some(c),
                    format!(
                        "differs from {word} {} of the same ticket {ticket:?}",
                        o.line
                    ),
                ));
            }
            if o.members.contains(&id) {
                return Err(err(
                    line,
                    Some("player"),
                    format!("{player:?} is already in ticket {ticket:?}"),
                ));
            }
            if o.members.len() >= team_size {
                return Err(err(
                    line,
                    Some("ticket"),
                    format!("ticket {ticket:?} has more players than a team holds ({team_size}); it could never be matched"),
                ));
            }
            o.members.push(id);
            continue;
        }
        if let Some(o) = open.take() {
            close(o, &mut tickets);
        }
        if !seen_tickets.insert(ticket.clone()) {
            return Err(err(
                line,
                Some("ticket"),
                format!("{ticket:?} appeared earlier: the rows of one ticket must be next to each other, and a new stay needs a new ticket id"),
            ));
        }
        open = Some(Open {
            key: ticket,
            line,
            at: SimTime::from_secs_f64(time_s),
            at_text,
            abandon,
            requeue,
            members: smallvec::smallvec![id],
        });
    }
    if let Some(o) = open.take() {
        close(o, &mut tickets);
    }
    if tickets.is_empty() {
        return Err(header_err(
            header_line,
            None,
            "the trace has a header but no rows",
        ));
    }
    // Stable: tickets at the same millisecond keep the file's order.
    tickets.sort_by_key(|t| t.at);
    Ok(Trace { players, tickets })
}

/// Collects a run's tickets as it makes them, in the order they join, one
/// row per member (the run's player ids), column by column, for a CSV
/// (`csv`) or a Parquet file (`report::trace_file`).
pub struct TraceWriter {
    /// `[regions]` data centres and homes, `[roles]` names: which optional
    /// columns the trace has, and the names its cells use.
    pub ctx: Context,
    pub time_ms: Vec<u64>,
    pub ticket: Vec<u32>,
    pub player: Vec<u32>,
    pub rating: Vec<f64>,
    pub true_skill: Vec<f64>,
    pub abandon_ms: Vec<Option<u64>>,
    pub requeue: Vec<bool>,
    /// Home index per row (with `[regions]`).
    pub home: Vec<u16>,
    /// Pings per row, `data centres` values each (with `[regions]`).
    pub pings_ms: Vec<u16>,
    /// Roles per row (with `[roles]`).
    pub roles: Vec<TraceRoles>,
}

/// Seconds with the millisecond exactly, so a trace reads back to the same times.
fn ms_text(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

impl TraceWriter {
    /// A writer for a run of the scenario `ctx` describes.
    pub fn new(ctx: Context) -> Self {
        TraceWriter {
            ctx,
            time_ms: Vec::new(),
            ticket: Vec::new(),
            player: Vec::new(),
            rating: Vec::new(),
            true_skill: Vec::new(),
            abandon_ms: Vec::new(),
            requeue: Vec::new(),
            home: Vec::new(),
            pings_ms: Vec::new(),
            roles: Vec::new(),
        }
    }

    /// Rows written so far (one per ticket member).
    pub fn rows(&self) -> usize {
        self.time_ms.len()
    }

    /// The column names, in the order the files have them.
    pub fn header(&self) -> Vec<String> {
        let mut h: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
        if let Some((dcs, _)) = &self.ctx.regions {
            h.push(REGION.into());
            h.extend(dcs.iter().map(|d| format!("{PING_PREFIX}{d}")));
        }
        if self.ctx.roles.is_some() {
            h.push(ROLES.into());
        }
        h
    }

    /// Row `i`'s home region name (with `[regions]`).
    pub fn region_name(&self, i: usize) -> &str {
        let homes = &self.ctx.regions.as_ref().expect("a run with [regions]").1;
        &homes[usize::from(self.home[i])]
    }

    /// Row `i`'s pings (with `[regions]`).
    pub fn row_pings(&self, i: usize) -> &[u16] {
        let dcs = self.ctx.regions.as_ref().map_or(0, |(d, _)| d.len());
        &self.pings_ms[i * dcs..(i + 1) * dcs]
    }

    /// Row `i`'s roles as the `roles` column has them: the main role, then
    /// the other accepted ones in `[roles]` order, `|`-separated.
    pub fn roles_text(&self, i: usize) -> String {
        let names = self.ctx.roles.as_ref().expect("a run with [roles]");
        let r = self.roles[i];
        let mut out = names[usize::from(r.main)].clone();
        for (k, n) in names.iter().enumerate() {
            if k != usize::from(r.main) && r.mask & (1 << k) != 0 {
                out.push('|');
                out.push_str(n);
            }
        }
        out
    }

    /// The trace as CSV text.
    pub fn csv(&self) -> String {
        use std::fmt::Write as _;
        let mut out = self.header().join(",") + "\n";
        for i in 0..self.rows() {
            let abandon = self.abandon_ms[i].map(ms_text).unwrap_or_default();
            // f64's Display is the shortest text that reads back to the same value.
            write!(
                out,
                "{},{},{},{},{},{},{}",
                ms_text(self.time_ms[i]),
                self.ticket[i],
                self.player[i],
                self.rating[i],
                self.true_skill[i],
                abandon,
                self.requeue[i]
            )
            .expect("writing to a String cannot fail");
            if self.ctx.regions.is_some() {
                write!(out, ",{}", quoted(self.region_name(i))).expect("to a String");
                for p in self.row_pings(i) {
                    write!(out, ",{p}").expect("to a String");
                }
            }
            if self.ctx.roles.is_some() {
                write!(out, ",{}", quoted(&self.roles_text(i))).expect("to a String");
            }
            out.push('\n');
        }
        out
    }
}

/// A CSV field, quoted when it holds a comma or a quote (names in a
/// scenario may).
fn quoted(v: &str) -> std::borrow::Cow<'_, str> {
    if v.contains([',', '"']) || v.trim() != v {
        format!("\"{}\"", v.replace('"', "\"\"")).into()
    } else {
        v.into()
    }
}

impl mmsim_core::engine::TicketLog for TraceWriter {
    fn enqueued(
        &mut self,
        at: SimTime,
        ticket: TicketId,
        members: &[LoggedMember<'_>],
        patience: Option<SimDuration>,
        requeue: bool,
    ) {
        for m in members {
            self.time_ms.push(at.as_ms());
            self.ticket.push(ticket.0);
            self.player.push(m.player.0);
            self.rating.push(m.rating);
            self.true_skill.push(m.true_skill);
            self.abandon_ms.push(patience.map(|p| p.as_ms()));
            self.requeue.push(requeue);
            if self.ctx.regions.is_some() {
                self.home.push(m.home.unwrap_or(0));
                self.pings_ms.extend_from_slice(m.pings_ms);
            }
            if self.ctx.roles.is_some() {
                self.roles
                    .push(m.roles.unwrap_or(TraceRoles { main: 0, mask: 1 }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "time_s,ticket,player,rating,true_skill,abandon_s,requeue\n\
        5.000,a,p1,1500,1400,,false\n\
        1.5,b,p2,1600,,30,false\n\
        1.5,b,p3,1620,1700,30,false\n\
        9,c,p1,1510,1400,,true\n";

    #[test]
    fn parties_players_and_order_come_from_the_rows() {
        let t = parse(GOOD, &Context::plain(5)).unwrap();
        assert_eq!(t.players.len(), 3);
        // Numbered by time: p2 and p3 (1.5 s), then p1 (5 s); p2 has no
        // true skill: its first rating.
        assert_eq!(
            t.players[0],
            TracePlayer {
                rating: 1600.0,
                true_skill: 1600.0,
                home: None,
                pings_ms: Vec::new(),
                roles: None,
            }
        );
        // Sorted stably by time: b (1.5 s) before a (5 s), then c.
        let at: Vec<u64> = t.tickets.iter().map(|t| t.at.as_ms()).collect();
        assert_eq!(at, vec![1500, 5000, 9000]);
        assert_eq!(t.tickets[0].members.len(), 2);
        assert_eq!(t.tickets[0].abandon_after, Some(SimDuration::from_secs(30)));
        assert_eq!(t.tickets[1].abandon_after, None);
        assert!(t.tickets[2].requeue && !t.tickets[1].requeue);
        assert_eq!(t.tickets[2].members[0], t.tickets[1].members[0]);
        assert_eq!(t.tickets[1].members[0], mmsim_core::model::PlayerId(2));
    }

    /// Issue 31: the shipped trace reversed replayed differently (a later
    /// row's rating became the player's first). The order of the tickets'
    /// rows, reversed or shuffled, never changes the trace read.
    #[test]
    fn the_order_of_the_rows_never_changes_the_trace() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scenarios/traces/small.csv"
        ))
        .unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        let header = lines.remove(0);
        let sorted = parse(&text, &Context::plain(1)).unwrap();
        let reversed: Vec<&str> = lines.iter().rev().copied().collect();
        let mut shuffled = lines.clone();
        // A fixed shuffle: every seventh row to the front.
        shuffled.sort_by_key(|l| (l.len() % 7 != 0, l.len()));
        for rows in [reversed, shuffled] {
            let other = format!("{header}\n{}\n", rows.join("\n"));
            assert_ne!(other, text);
            assert_eq!(parse(&other, &Context::plain(1)).unwrap(), sorted);
        }
        // With ties: two tickets at one instant, given in either order; a
        // party's members keep their order.
        let h = "time_s,ticket,player,rating\n";
        let a = parse(
            &format!("{h}1,x,p,1500\n1,y,q,1600\n1,y,r,1600\n"),
            &Context::plain(5),
        )
        .unwrap();
        let b = parse(
            &format!("{h}1,y,q,1600\n1,y,r,1600\n1,x,p,1500\n"),
            &Context::plain(5),
        )
        .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.tickets[1].members.len(), 2);
    }

    #[test]
    fn bad_rows_name_their_line_and_column() {
        let bad = |text: &str| parse(text, &Context::plain(5)).unwrap_err().to_string();
        let h = "time_s,ticket,player,rating\n";
        assert_eq!(
            bad(&format!("{h}1,a,p,1500\n2,b,q,abc\n")),
            "line 3, column `rating`: expected a finite number, got \"abc\""
        );
        assert!(bad(&format!("{h}-1,a,p,1500\n")).starts_with("line 2, column `time_s`: seconds"));
        assert!(bad(&format!("{h}1,a,p,1500\n2,b,q,1\n3,a,r,1\n"))
            .starts_with("line 4, column `ticket`"));
        assert!(bad(&format!("{h}1,a,p,1500\n1,a,p,1500\n")).starts_with("line 3, column `player`"));
        assert!(bad(&format!("{h}1,a,p,1500\n2,a,q,1500\n"))
            .starts_with("line 3, column `time_s`: differs from line 2"));
        assert!(bad("time_s,ticket,player,rating,mmr\n")
            .starts_with("line 1, column `mmr`: unknown column"));
        assert!(bad("time_s,ticket,player\n").starts_with("line 1, column `rating`: is missing"));
        assert!(bad(&format!("{h}1,a,p\n")).starts_with("line 2: has 3 fields"));
        assert_eq!(
            parse(&format!("{h}1,a,p,1\n1,a,q,1\n"), &Context::plain(1))
                .unwrap_err()
                .line,
            Some(3)
        );
    }

    /// p and q match at once and play for at least a minute; p's and q's
    /// next tickets come due while they play, wait until the match ends,
    /// then join (and match) at its end; r's ticket, free, joins on time.
    #[test]
    fn a_ticket_of_a_busy_player_joins_when_the_player_is_free() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join("t.csv"),
            "time_s,ticket,player,rating\n0,a,p,1500\n0,b,q,1500\n10,c,p,1500\n20,d,q,1500\n30,e,r,3000\n",
        )
        .unwrap();
        let text = "[run]\nname = \"t\"\nduration = \"1h\"\n\
            [arrivals]\ntrace = \"t.csv\"\n\
            [policy]\nkind = \"fixed-limit\"\nlimit = 1000\n\
            [outcome]\nmodel = \"logistic\"\nduration = \"5m\"\nduration_min = \"1m\"\n";
        let loaded = crate::from_text(text, &tmp.path().join("s.toml"), &[]).unwrap();
        let kept = crate::run::run_keeping(&loaded.scenario, 1);
        let mut tickets = kept.records.tickets.clone();
        tickets.sort_by_key(|t| t.ticket);
        let first = &kept.records.matches[0];
        let ended = first.ended.expect("a 5-minute match ends within the hour");
        assert!(ended.as_ms() >= 60_000);
        let enqueued: Vec<u64> = tickets.iter().map(|t| t.enqueued.as_ms()).collect();
        // r joins on time (30 s), before p and q are free again.
        assert_eq!(enqueued, vec![0, 0, 30_000, ended.as_ms(), ended.as_ms()]);
        assert_eq!(kept.records.matches.len(), 2);
        assert_eq!(kept.records.matches[1].formed, ended);
        assert_eq!(kept.output.perf.trace_tickets_delayed, Some(2));
    }

    #[test]
    fn quoted_player_ids_may_hold_commas() {
        let t = parse(
            "time_s,ticket,player,rating\n1,a,\"x,y\",1\n2,b,\"x,y\",3\n",
            &Context::plain(1),
        )
        .unwrap();
        assert_eq!(t.players.len(), 1);
        assert!(fields("a,\"b\"c").is_none());
    }

    #[test]
    fn a_written_trace_reads_back_to_the_same_tickets() {
        use mmsim_core::engine::TicketLog;
        use mmsim_core::model::PlayerId;
        let mut w = TraceWriter::new(Context::plain(2));
        let m = |p, r: f64| LoggedMember {
            player: PlayerId(p),
            rating: r,
            true_skill: r / 3.0,
            home: None,
            pings_ms: &[],
            roles: None,
        };
        w.enqueued(
            SimTime::from_ms(1_234),
            TicketId(0),
            &[m(7, 1500.1)],
            Some(SimDuration::from_ms(61_001)),
            false,
        );
        w.enqueued(
            SimTime::from_ms(1_234),
            TicketId(1),
            &[m(3, 0.1 + 0.2), m(7, 1e-7)],
            None,
            true,
        );
        let t = parse(&w.csv(), &Context::plain(2)).unwrap();
        assert_eq!(t.tickets.len(), 2);
        assert_eq!(t.tickets[0].at.as_ms(), 1_234);
        assert_eq!(t.tickets[0].abandon_after.unwrap().as_ms(), 61_001);
        assert_eq!(t.players[0].true_skill, 1500.1 / 3.0);
        assert_eq!(t.players[1].rating, 0.1 + 0.2);
        assert_eq!(t.tickets[1].members.as_slice(), &[PlayerId(1), PlayerId(0)]);
    }

    fn regional() -> Context {
        Context {
            team_size: 5,
            regions: Some((
                vec!["eu".into(), "us".into()],
                vec!["europe".into(), "america".into()],
            )),
            roles: Some(vec!["tank".into(), "healer".into(), "damage".into()]),
        }
    }

    #[test]
    fn region_pings_and_roles_are_read_per_player() {
        let t = parse(
            "time_s,ticket,player,rating,region,ping_ms_us,ping_ms_eu,roles\n\
             1,a,p,1500,america,40,95.4,damage|tank\n\
             2,b,q,1500,,,,\n\
             3,c,p,1500,,,,damage|tank\n",
            &regional(),
        )
        .unwrap();
        let p = &t.players[0];
        assert_eq!(p.home, Some(1));
        // Columns in any order; stored in [regions] order, rounded to the ms.
        assert_eq!(p.pings_ms, vec![95, 40]);
        // Main role first: damage (2), also tank (0).
        assert_eq!(
            p.roles,
            Some(TraceRoles {
                main: 2,
                mask: 0b101
            })
        );
        let q = &t.players[1];
        assert_eq!((q.home, q.pings_ms.is_empty(), q.roles), (None, true, None));
    }

    #[test]
    fn bad_region_ping_and_role_cells_name_their_line_and_column() {
        let bad = |text: &str, ctx: &Context| parse(text, ctx).unwrap_err().to_string();
        let h = "time_s,ticket,player,rating,region,ping_ms_eu,ping_ms_us,roles\n";
        let r = regional();
        assert_eq!(
            bad(&format!("{h}1,a,p,1,asia,1,2,tank\n"), &r),
            "line 2, column `region`: unknown region \"asia\"; [[regions.homes]] names are europe, america"
        );
        assert!(
            bad(&format!("{h}1,a,p,1,,1,2,tank\n2,b,q,1,,-3,2,tank\n"), &r).starts_with(
                "line 3, column `ping_ms_eu`: a ping in milliseconds from 0 to 60000, got \"-3\""
            )
        );
        assert!(bad(&format!("{h}1,a,p,1,,1,,tank\n"), &r)
            .starts_with("line 2, column `ping_ms_us`: is empty while"));
        assert!(bad(&format!("{h}1,a,p,1,,,,tank|mage\n"), &r).starts_with(
            "line 2, column `roles`: unknown role \"mage\"; roles are tank, healer, damage"
        ));
        assert!(bad(&format!("{h}1,a,p,1,,,,tank|tank\n"), &r)
            .starts_with("line 2, column `roles`: names \"tank\" twice"));
        assert!(
            bad(&format!("{h}1,a,p,1,europe,,,\n2,b,p,1,america,,,\n"), &r).starts_with(
                "line 3, column `region`: differs from line 2, player \"p\"'s first row"
            )
        );
        assert!(
            bad("time_s,ticket,player,rating,ping_ms_eu\n1,a,p,1,3\n", &r)
                .starts_with("line 1, column `ping_ms_us`: is missing: a trace with ping columns")
        );
        assert!(bad("time_s,ticket,player,rating,ping_ms_mars\n", &r)
            .starts_with("line 1, column `ping_ms_mars`: names no data centre; [regions] data_centres are eu, us"));
        // Without the sections, the columns are refused, naming the section.
        let plain = Context::plain(5);
        assert!(bad("time_s,ticket,player,rating,region\n", &plain)
            .starts_with("line 1, column `region`: needs a [regions] section"));
        assert!(bad("time_s,ticket,player,rating,ping_ms_eu\n", &plain)
            .starts_with("line 1, column `ping_ms_eu`: needs a [regions] section"));
        assert!(bad("time_s,ticket,player,rating,roles\n", &plain)
            .starts_with("line 1, column `roles`: needs a [roles] section"));
    }

    #[test]
    fn a_written_regional_role_trace_reads_back_to_the_same_players() {
        use mmsim_core::engine::TicketLog;
        use mmsim_core::model::PlayerId;
        let mut w = TraceWriter::new(regional());
        let pings = [[12u16, 180], [200, 35]];
        let m = |p: u32, home: u16, roles| LoggedMember {
            player: PlayerId(p),
            rating: 1500.0,
            true_skill: 1400.0,
            home: Some(home),
            pings_ms: &pings[home as usize],
            roles: Some(roles),
        };
        let heal_dps = TraceRoles {
            main: 1,
            mask: 0b110,
        };
        let tank = TraceRoles {
            main: 0,
            mask: 0b001,
        };
        w.enqueued(
            SimTime::from_ms(5),
            TicketId(0),
            &[m(4, 1, heal_dps), m(9, 0, tank)],
            None,
            false,
        );
        let text = w.csv();
        assert!(text.starts_with(
            "time_s,ticket,player,rating,true_skill,abandon_s,requeue,region,ping_ms_eu,ping_ms_us,roles\n\
             0.005,0,4,1500,1400,,false,america,200,35,healer|damage\n"
        ));
        let t = parse(&text, &regional()).unwrap();
        assert_eq!(t.players[0].home, Some(1));
        assert_eq!(t.players[0].pings_ms, vec![200, 35]);
        assert_eq!(t.players[0].roles, Some(heal_dps));
        assert_eq!(t.players[1].roles, Some(tank));
    }
}
