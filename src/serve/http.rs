//! The server's HTTP/1.1, small and strict: one request per connection
//! (every answer closes it), read under a deadline and size limits, one
//! thread per connection up to a cap. A small server crate (tiny_http 0.12)
//! was tried first: its connection pool can leave a new connection queued
//! behind connections held open (a browser's idle keep-alive sockets, a
//! client that stalls mid-body) until one of them closes, and it reads
//! with no deadline. Here nothing queues: a connection beyond the cap gets
//! 503 at once, and a stalled one is dropped when its deadline passes.
//! Parsing the request head is `httparse`'s (the parser hyper uses).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The longest request head (request line and headers).
pub const MAX_HEAD: usize = 16 * 1024;
/// How long a client may take to send its whole request.
pub const READ_DEADLINE: Duration = Duration::from_secs(15);

pub struct Request {
    pub method: String,
    /// The request target as sent (`/api/state?wait=5`).
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The body was larger than allowed: it was not read.
    pub body_too_large: bool,
}

impl Request {
    /// The first header of that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Why no request could be read: a status to answer with, or nothing to
/// answer (the client went away).
pub enum ReadError {
    Answer(u16, String),
    Gone,
}

/// Reads one request; a body over `max_body` is flagged, not read.
pub fn read_request(stream: &mut TcpStream, max_body: usize) -> Result<Request, ReadError> {
    let started = Instant::now();
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf: Vec<u8> = Vec::with_capacity(2048);
    let mut chunk = [0u8; 4096];
    let (head_len, method, target, headers) = loop {
        if !buf.is_empty() {
            let mut slots = [httparse::EMPTY_HEADER; 64];
            let mut req = httparse::Request::new(&mut slots);
            match req.parse(&buf) {
                Ok(httparse::Status::Complete(n)) if n > MAX_HEAD => {
                    return Err(ReadError::Answer(
                        431,
                        format!("the request head is larger than {MAX_HEAD} bytes"),
                    ))
                }
                Ok(httparse::Status::Complete(n)) => {
                    let headers = req
                        .headers
                        .iter()
                        .map(|h| {
                            (
                                h.name.to_string(),
                                String::from_utf8_lossy(h.value).trim().to_string(),
                            )
                        })
                        .collect::<Vec<_>>();
                    break (
                        n,
                        req.method.unwrap_or("").to_string(),
                        req.path.unwrap_or("").to_string(),
                        headers,
                    );
                }
                Ok(httparse::Status::Partial) => {}
                Err(httparse::Error::TooManyHeaders) => {
                    return Err(ReadError::Answer(
                        431,
                        "too many headers (64 at most)".into(),
                    ))
                }
                Err(e) => return Err(ReadError::Answer(400, format!("not an HTTP request: {e}"))),
            }
        }
        if buf.len() > MAX_HEAD {
            return Err(ReadError::Answer(
                431,
                format!("the request head is larger than {MAX_HEAD} bytes"),
            ));
        }
        if started.elapsed() > READ_DEADLINE {
            return Err(ReadError::Answer(
                408,
                "the request took too long to arrive".into(),
            ));
        }
        match stream.read(&mut chunk) {
            Ok(0) if buf.is_empty() => return Err(ReadError::Gone),
            Ok(0) => return Err(ReadError::Answer(400, "the request ended early".into())),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if is_timeout(&e) => continue,
            Err(_) => return Err(ReadError::Gone),
        }
    };
    let mut rq = Request {
        method,
        target,
        headers,
        body: Vec::new(),
        body_too_large: false,
    };
    let rest = buf.split_off(head_len);
    let chunked = rq
        .header("Transfer-Encoding")
        .map(|v| v.to_ascii_lowercase());
    if let Some(te) = chunked {
        if te != "chunked" {
            return Err(ReadError::Answer(
                501,
                format!("Transfer-Encoding {te} is not supported"),
            ));
        }
        let mut r = Deadline {
            stream,
            pending: rest,
            started,
        };
        match read_chunked(&mut r, max_body)? {
            Some(body) => rq.body = body,
            None => rq.body_too_large = true,
        }
        return Ok(rq);
    }
    let length = match rq.header("Content-Length") {
        None => 0,
        Some(v) => v
            .parse::<usize>()
            .map_err(|_| ReadError::Answer(400, format!("Content-Length `{v}` is not a number")))?,
    };
    if length > max_body {
        rq.body_too_large = true;
        return Ok(rq);
    }
    let mut r = Deadline {
        stream,
        pending: rest,
        started,
    };
    let mut body = vec![0u8; length];
    r.read_exact_all(&mut body)?;
    rq.body = body;
    Ok(rq)
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// The rest of a request: bytes already read, then the socket, all under
/// the request's deadline.
struct Deadline<'a> {
    stream: &'a mut TcpStream,
    pending: Vec<u8>,
    started: Instant,
}

impl Deadline<'_> {
    fn byte(&mut self) -> Result<u8, ReadError> {
        let mut b = [0u8; 1];
        self.read_exact_all(&mut b)?;
        Ok(b[0])
    }

    fn read_exact_all(&mut self, out: &mut [u8]) -> Result<(), ReadError> {
        let mut filled = 0;
        let take = self.pending.len().min(out.len());
        out[..take].copy_from_slice(&self.pending[..take]);
        self.pending.drain(..take);
        filled += take;
        while filled < out.len() {
            if self.started.elapsed() > READ_DEADLINE {
                return Err(ReadError::Answer(
                    408,
                    "the request took too long to arrive".into(),
                ));
            }
            match self.stream.read(&mut out[filled..]) {
                Ok(0) => return Err(ReadError::Answer(400, "the body ended early".into())),
                Ok(n) => filled += n,
                Err(e) if is_timeout(&e) => continue,
                Err(_) => return Err(ReadError::Gone),
            }
        }
        Ok(())
    }

    fn line(&mut self) -> Result<String, ReadError> {
        let mut line = Vec::new();
        loop {
            let b = self.byte()?;
            if b == b'\n' {
                break;
            }
            line.push(b);
            if line.len() > 1024 {
                return Err(ReadError::Answer(400, "a chunk line is too long".into()));
            }
        }
        Ok(String::from_utf8_lossy(&line).trim().to_string())
    }
}

/// A chunked body, or `None` when it grows past `max_body`.
fn read_chunked(r: &mut Deadline<'_>, max_body: usize) -> Result<Option<Vec<u8>>, ReadError> {
    let mut body = Vec::new();
    loop {
        let line = r.line()?;
        let size_text = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| ReadError::Answer(400, format!("bad chunk size `{size_text}`")))?;
        if size == 0 {
            // Trailers, up to the empty line.
            while !r.line()?.is_empty() {}
            return Ok(Some(body));
        }
        if body.len() + size > max_body {
            return Ok(None);
        }
        let start = body.len();
        body.resize(start + size, 0);
        r.read_exact_all(&mut body[start..])?;
        if !r.line()?.is_empty() {
            return Err(ReadError::Answer(
                400,
                "a chunk does not end where its size says".into(),
            ));
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        421 => "Misdirected Request",
        422 => "Unprocessable Content",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// Writes an answer and closes the connection. With `drain`, what the
/// client still sends (a body that was refused unread) is read and dropped
/// for a moment first, so the client sees the answer rather than a reset.
pub fn respond(
    stream: &mut TcpStream,
    status: u16,
    headers: &[(&str, &str)],
    body: &[u8],
    head_only: bool,
    drain: bool,
) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(10)));
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        reason(status),
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let written = stream
        .write_all(head.as_bytes())
        .and_then(|()| {
            if head_only {
                Ok(())
            } else {
                stream.write_all(body)
            }
        })
        .and_then(|()| stream.flush());
    if written.is_err() {
        return;
    }
    let _ = stream.shutdown(std::net::Shutdown::Write);
    if drain {
        let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
        let until = Instant::now() + Duration::from_secs(2);
        let mut sink = [0u8; 16 * 1024];
        let mut total = 0usize;
        while Instant::now() < until && total < 8 << 20 {
            match stream.read(&mut sink) {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    }
}
