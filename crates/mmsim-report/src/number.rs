//! The one number formatter. Every number mmsim prints (terminal tables,
//! report pages, plot ticks and captions, `mmsim rebalance`) is written by
//! `places` with so many decimals; the named styles below only decide how
//! many decimals (and whether a k/M suffix) suit the place a number is read,
//! so a rule such as "never print float noise or `-0`" lives in one function.

/// `x` with `decimals` decimals. With `trim`, trailing zeros and a bare
/// point are dropped and `-0` prints as `0` (`0.30` as `0.3`); without, the
/// decimals stay, for columns that line up (`0.020`). Non-finite values
/// print as Rust writes them (`NaN`, `inf`).
pub fn places(x: f64, decimals: usize, trim: bool) -> String {
    let mut s = format!("{x:.decimals$}");
    if trim {
        if s.contains('.') {
            s = s.trim_end_matches('0').trim_end_matches('.').to_string();
        }
        if s == "-0" {
            s = "0".into();
        }
    }
    s
}

/// Up to `digits` significant digits, trailing zeros dropped; whole numbers
/// print whole. Terminal tables use six (`num`); headline lines three, which
/// is what a reader takes in at a glance.
pub fn sig(x: f64, digits: i32) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if !x.is_finite() {
        return x.to_string();
    }
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return places(x, 0, false);
    }
    let decimals = (digits - 1 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
    places(x, decimals, true)
}

/// Up to six significant digits, trailing zeros dropped, so 0.1 + 0.2 prints
/// as 0.3 and 1500 as 1500; whole numbers print whole, -0 prints as 0.
pub fn num(x: f64) -> String {
    sig(x, 6)
}

/// A number that may be missing (no data): `-` when it is.
pub fn opt(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), num)
}

/// A change: `+` in front of a rise, so a column of differences reads at a glance.
pub fn signed(x: f64) -> String {
    let s = num(x);
    if x > 0.0 && s != "0" {
        format!("+{s}")
    } else {
        s
    }
}

/// A half-width to two significant digits, zeros kept: `0.028`, `0.020`,
/// not `0.0278755`.
pub fn half_width(x: f64) -> String {
    if !(x.is_finite() && x > 0.0) {
        return num(x);
    }
    let decimals = (1 - x.log10().floor() as i32).max(0) as usize;
    places(x, decimals, false)
}

/// Short, stable text for plot ticks and captions: k from ten thousand, M
/// from a million, three to four significant digits.
pub fn tick(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let a = v.abs();
    let (x, suffix) = if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let decimals = if x.abs() >= 100.0 {
        1
    } else if x.abs() >= 1.0 {
        2
    } else {
        3
    };
    places(x, decimals, true) + suffix
}

/// A figure in `report.html`'s summary tables: enough digits to compare runs
/// by eye (one decimal from 1000, three from 1, four below), never float
/// noise like 0.30000000000000004.
pub fn table(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let a = x.abs();
    let decimals = if a >= 1000.0 {
        1
    } else if a >= 1.0 {
        3
    } else {
        4
    };
    places(x, decimals, true)
}

/// At most three significant digits (whole numbers from 100 up, k and M
/// beyond): the headline strip is read at a glance; the tables below it
/// give every digit.
pub fn glance(v: f64) -> String {
    let a = v.abs();
    if a >= 1e7 {
        return format!("{}M", glance(v / 1e6));
    }
    if a >= 1e4 {
        return format!("{}k", glance(v / 1e3));
    }
    let decimals = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else {
        2
    };
    places(v, decimals, true)
}

/// Whole values whole, anything else to two decimals kept (`2.50`):
/// `mmsim rebalance`'s attribute totals, means and distances.
pub fn two_places(x: f64) -> String {
    if x.fract() == 0.0 {
        places(x, 0, false)
    } else {
        places(x, 2, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_style_prints_what_its_readers_expect() {
        assert_eq!(num(0.1 + 0.2), "0.3");
        assert_eq!(num(1234.5678), "1234.57");
        assert_eq!(num(0.000123456789), "0.000123457");
        assert_eq!(num(1500.0), "1500");
        assert_eq!(num(-0.0000001), "-0.0000001");
        assert_eq!(num(-0.0), "0");
        assert_eq!(opt(None), "-");
        assert_eq!(signed(-3.0), "-3");
        assert_eq!(signed(2.5), "+2.5");
        assert_eq!(signed(0.0), "0");
        assert_eq!(sig(0.596703, 3), "0.597");
        assert_eq!(sig(1234.5678, 3), "1235");
        assert_eq!(sig(29.456, 3), "29.5");
        assert_eq!(sig(3.0, 3), "3");
        assert_eq!(half_width(0.0278755), "0.028");
        assert_eq!(half_width(0.02), "0.020");
        assert_eq!(tick(0.1 + 0.2), "0.3");
        assert_eq!(tick(1500.0), "1500");
        assert_eq!(tick(25_000.0), "25k");
        assert_eq!(tick(3_250_000.0), "3.25M");
        assert_eq!(tick(-0.0001), "0");
        assert_eq!(table(0.1 + 0.2), "0.3");
        assert_eq!(table(1234.56), "1234.6");
        assert_eq!(table(-0.00001), "0");
        assert_eq!(glance(29.482), "29.5");
        assert_eq!(glance(206_695.0), "207k");
        assert_eq!(glance(31_250_000.0), "31.2M");
        assert_eq!(two_places(3.0), "3");
        assert_eq!(two_places(2.5), "2.50");
        assert_eq!(places(f64::NAN, 2, true), "NaN");
    }
}
