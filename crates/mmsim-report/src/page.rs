//! What every HTML page shares (the run report, the replicated-run,
//! comparison, sweep and fit pages, `mmsim serve`): escaping, inline images
//! and the grid of plots. A leaf, so a page's sections can use it without
//! importing the page.

use crate::chart::Plot;
use std::fmt::Write as _;

/// Plots as a two-column grid of inline PNGs with their captions (nothing
/// when there are none): the comparison and replicated pages share it.
pub fn plot_grid(h: &mut String, plots: &[Plot]) {
    if plots.is_empty() {
        return;
    }
    h.push_str("<div class=\"grid\">\n");
    for p in plots {
        let _ = writeln!(
            h,
            "<figure><img alt=\"{}\" src=\"data:image/png;base64,{}\"><figcaption>{}</figcaption></figure>",
            esc(&p.title),
            base64(&p.png),
            esc(&p.caption)
        );
    }
    h.push_str("</div>\n");
}

/// Text made safe inside HTML elements and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Standard base64 with padding; small enough not to need a dependency.
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        out.push(A[(n >> 18) as usize & 63] as char);
        out.push(A[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            A[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            A[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}
