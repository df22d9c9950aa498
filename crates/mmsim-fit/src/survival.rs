//! Patience by survival analysis: a ticket's wait is its patience when it
//! abandoned, and only a lower bound on it when it matched or was still
//! waiting (right-censored). Kaplan-Meier gives the curve without a model;
//! exponential, Weibull and log-normal are fitted by maximum likelihood
//! with censoring and compared by AIC. Intervals come from the observed
//! information (the inverse of the log-likelihood's negative Hessian at the
//! maximum), on the log scale of each positive parameter so they stay
//! positive.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};
use statrs::function::gamma::gamma;

/// One stay in the queue: how long it lasted, and whether it ended by the
/// player giving up (an event) or by something else (censored).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Obs {
    pub wait_s: f64,
    pub abandoned: bool,
}

/// The Weibull shapes and log-normal spreads a scenario can hold
/// (`arrivals.patience`); a fit outside them is not offered.
pub const MIN_SHAPE: f64 = 0.01;
pub const MAX_SHAPE: f64 = 1000.0;
pub const MAX_SIGMA: f64 = 10.0;

/// z for a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// A point estimate with its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Estimate {
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Estimate {
    /// An interval exp(ln x ± z se) from the standard error of ln x.
    pub fn log_scale(value: f64, se_ln: f64) -> Estimate {
        Estimate {
            value,
            lo: value * (-Z95 * se_ln).exp(),
            hi: value * (Z95 * se_ln).exp(),
        }
    }

    pub fn plain(value: f64, se: f64) -> Estimate {
        Estimate {
            value,
            lo: value - Z95 * se,
            hi: value + Z95 * se,
        }
    }

    pub fn covers(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }
}

/// One step of the Kaplan-Meier curve: survival just after `t_s`, with
/// Greenwood's 95% band (log-log transformed, so it stays in [0, 1]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct KmStep {
    pub t_s: f64,
    pub at_risk: usize,
    pub events: usize,
    pub survival: f64,
    pub lo: f64,
    pub hi: f64,
}

/// The product-limit estimator. Ties: every stay censored at an event's
/// time still counts as at risk at it (the usual convention: censoring
/// happens just after).
pub fn kaplan_meier(obs: &[Obs]) -> Vec<KmStep> {
    let mut sorted: Vec<Obs> = obs.to_vec();
    sorted.sort_by(|a, b| a.wait_s.total_cmp(&b.wait_s));
    let mut out = Vec::new();
    let mut at_risk = sorted.len();
    let (mut s, mut greenwood) = (1.0f64, 0.0f64);
    let mut i = 0;
    while i < sorted.len() {
        let t = sorted[i].wait_s;
        let mut j = i;
        let mut d = 0;
        while j < sorted.len() && sorted[j].wait_s == t {
            d += usize::from(sorted[j].abandoned);
            j += 1;
        }
        if d > 0 {
            let n = at_risk as f64;
            s *= 1.0 - d as f64 / n;
            if at_risk > d {
                greenwood += d as f64 / (n * (n - d as f64));
            }
            let (lo, hi) = if s > 0.0 && s < 1.0 && greenwood > 0.0 {
                // Var(ln(-ln S)) = greenwood / (ln S)^2.
                let se = greenwood.sqrt() / s.ln().abs();
                let a = (-s.ln()).ln();
                ((-(a + Z95 * se).exp()).exp(), (-(a - Z95 * se).exp()).exp())
            } else {
                (s, s)
            };
            out.push(KmStep {
                t_s: t,
                at_risk,
                events: d,
                survival: s,
                lo,
                hi,
            });
        }
        at_risk -= j - i;
        i = j;
    }
    out
}

/// A fitted family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    Exponential,
    Weibull,
    LogNormal,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::Exponential => "exponential",
            Family::Weibull => "weibull",
            Family::LogNormal => "log-normal",
        }
    }
}

/// One family's maximum-likelihood fit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParametricFit {
    pub family: Family,
    pub log_likelihood: f64,
    /// 2k − 2 ln L.
    pub aic: f64,
    /// AIC minus the best family's.
    pub delta_aic: f64,
    /// Exponential: `mean_s`. Weibull: `shape`, `scale_s`. Log-normal:
    /// `median_s`, `sigma`. Every family: `mean_s` (implied).
    #[serde(serialize_with = "as_map")]
    pub params: Vec<(String, Estimate)>,
}

/// The parameters as a JSON object, in their order.
fn as_map<S: serde::Serializer>(params: &[(String, Estimate)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(params.len()))?;
    for (k, v) in params {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

impl ParametricFit {
    pub fn param(&self, name: &str) -> Option<Estimate> {
        self.params.iter().find(|(n, _)| n == name).map(|(_, e)| *e)
    }

    /// Survival at `t_s` under the point estimates.
    pub fn survival(&self, t_s: f64) -> f64 {
        let p = |n: &str| self.param(n).map_or(f64::NAN, |e| e.value);
        match self.family {
            Family::Exponential => (-t_s / p("mean_s")).exp(),
            Family::Weibull => (-(t_s / p("scale_s")).powf(p("shape"))).exp(),
            Family::LogNormal => {
                if t_s <= 0.0 {
                    return 1.0;
                }
                let z = (t_s.ln() - p("median_s").ln()) / p("sigma");
                std_normal().sf(z)
            }
        }
    }
}

fn std_normal() -> Normal {
    Normal::standard()
}

/// Why a family could not be fitted.
#[derive(Clone, Debug, PartialEq)]
pub struct TooFew(pub String);

/// Censored exponential: rate = events / total exposure (closed form); the
/// interval from Var(ln rate) = 1/events.
pub fn fit_exponential(obs: &[Obs]) -> Result<ParametricFit, TooFew> {
    let d = obs.iter().filter(|o| o.abandoned).count();
    let exposure: f64 = obs.iter().map(|o| o.wait_s).sum();
    if d == 0 || exposure <= 0.0 {
        return Err(TooFew(format!(
            "{d} abandons in {exposure:.0} s of waiting: no rate to fit"
        )));
    }
    let rate = d as f64 / exposure;
    let ll = d as f64 * rate.ln() - rate * exposure;
    let mean = Estimate::log_scale(1.0 / rate, 1.0 / (d as f64).sqrt());
    Ok(ParametricFit {
        family: Family::Exponential,
        log_likelihood: ll,
        aic: 2.0 - 2.0 * ll,
        delta_aic: 0.0,
        params: vec![("mean_s".into(), mean)],
    })
}

/// Inverse of a 2x2 symmetric positive-definite matrix, or `None`.
fn inverse2(m: [[f64; 2]; 2]) -> Option<[[f64; 2]; 2]> {
    let det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    if !(det.is_finite() && det > 0.0 && m[0][0] > 0.0) {
        return None;
    }
    Some([
        [m[1][1] / det, -m[0][1] / det],
        [-m[1][0] / det, m[0][0] / det],
    ])
}

/// The delta method's variance of a function whose gradient is `g`, for
/// parameters with covariance `cov`: g' cov g.
fn delta_var(g: [f64; 2], cov: &[[f64; 2]; 2]) -> f64 {
    g[0] * g[0] * cov[0][0] + 2.0 * g[0] * g[1] * cov[0][1] + g[1] * g[1] * cov[1][1]
}

/// Weibull terms at shape `k` and log-scale `c`: the log-likelihood, its
/// gradient and Hessian in (k, c). Waits of 0 are events of a player who
/// left at once; they are nudged to a millisecond, the log's resolution.
fn weibull_terms(obs: &[Obs], k: f64, c: f64) -> (f64, [f64; 2], [[f64; 2]; 2]) {
    let (mut ll, mut gk, mut gc) = (0.0, 0.0, 0.0);
    let (mut hkk, mut hkc, mut hcc) = (0.0, 0.0, 0.0);
    for o in obs {
        let lt = o.wait_s.max(1e-3).ln();
        let z = lt - c;
        let u = (k * z).exp();
        ll -= u;
        gk -= z * u;
        gc += k * u;
        hkk -= z * z * u;
        hkc += u * (1.0 + k * z);
        hcc -= k * k * u;
        if o.abandoned {
            ll += k.ln() + (k - 1.0) * lt - k * c;
            gk += 1.0 / k + z;
            gc -= k;
            hkk -= 1.0 / (k * k);
            hkc -= 1.0;
        }
    }
    (ll, [gk, gc], [[hkk, hkc], [hkc, hcc]])
}

/// Censored Weibull by profile likelihood: for a shape k the scale has a
/// closed form (λ^k = Σ t^k / events), and the profile's derivative in k
/// falls monotonically, so its root is found by bisection on ln k. The
/// interval comes from the full two-parameter observed information.
pub fn fit_weibull(obs: &[Obs]) -> Result<ParametricFit, TooFew> {
    let d = obs.iter().filter(|o| o.abandoned).count();
    if d < 2 {
        return Err(TooFew(format!("{d} abandons: a shape needs at least 2")));
    }
    let df = d as f64;
    let sum_ev_lt: f64 = obs
        .iter()
        .filter(|o| o.abandoned)
        .map(|o| o.wait_s.max(1e-3).ln())
        .sum();
    // Scaled by the largest wait so that t^k stays finite for large k.
    let ln_ref = obs
        .iter()
        .map(|o| o.wait_s.max(1e-3).ln())
        .fold(f64::NEG_INFINITY, f64::max);
    let score = |k: f64| -> f64 {
        let (mut s0, mut s1) = (0.0, 0.0);
        for o in obs {
            let z = o.wait_s.max(1e-3).ln() - ln_ref;
            let u = (k * z).exp();
            s0 += u;
            s1 += u * z;
        }
        df / k + (sum_ev_lt - df * ln_ref) - df * s1 / s0
    };
    let (mut lo, mut hi) = (MIN_SHAPE.ln(), MAX_SHAPE.ln());
    if score(lo.exp()) <= 0.0 || score(hi.exp()) >= 0.0 {
        return Err(TooFew(
            format!("the waits give no Weibull shape between {MIN_SHAPE} and {MAX_SHAPE} (a scenario's range)"),
        ));
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if score(mid.exp()) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-13 {
            break;
        }
    }
    let k = (0.5 * (lo + hi)).exp();
    let s0: f64 = obs
        .iter()
        .map(|o| (k * (o.wait_s.max(1e-3).ln() - ln_ref)).exp())
        .sum();
    let c = ln_ref + (s0 / df).ln() / k;
    let (ll, _, h) = weibull_terms(obs, k, c);
    let cov = inverse2([[-h[0][0], -h[0][1]], [-h[1][0], -h[1][1]]])
        .ok_or_else(|| TooFew("the Weibull fit's information is singular".into()))?;
    let shape = Estimate::log_scale(k, cov[0][0].sqrt() / k);
    let scale = Estimate::log_scale(c.exp(), cov[1][1].sqrt());
    // mean = λ Γ(1 + 1/k): delta method in (k, c).
    let mean = c.exp() * gamma(1.0 + 1.0 / k);
    let dk = {
        let e = 1e-6 * k;
        (c.exp() * gamma(1.0 + 1.0 / (k + e)) - c.exp() * gamma(1.0 + 1.0 / (k - e))) / (2.0 * e)
    };
    let grad = [dk / mean, 1.0];
    let var_ln_mean = delta_var(grad, &cov);
    Ok(ParametricFit {
        family: Family::Weibull,
        log_likelihood: ll,
        aic: 4.0 - 2.0 * ll,
        delta_aic: 0.0,
        params: vec![
            ("shape".into(), shape),
            ("scale_s".into(), scale),
            (
                "mean_s".into(),
                Estimate::log_scale(mean, var_ln_mean.sqrt()),
            ),
        ],
    })
}

/// ln S(z) for the standard normal and the inverse Mills ratio
/// φ(z)/S(z), stable far in the tail.
fn log_sf_and_mills(z: f64) -> (f64, f64) {
    let n = std_normal();
    let sf = n.sf(z);
    if sf > 1e-300 && z < 30.0 {
        let pdf = (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
        (sf.ln(), pdf / sf)
    } else {
        // Asymptotic: S(z) ≈ φ(z)/z (1 − 1/z²).
        let ln_pdf = -0.5 * z * z - 0.5 * (2.0 * std::f64::consts::PI).ln();
        (ln_pdf - z.ln() + (1.0 - 1.0 / (z * z)).ln(), z + 1.0 / z)
    }
}

/// Log-normal terms in (a, b) = (1/σ, μ/σ), where z = a ln t − b: in these
/// the censored log-likelihood is concave, so Newton's method with a
/// halving step cannot wander.
fn lognormal_terms(obs: &[Obs], a: f64, b: f64) -> (f64, [f64; 2], [[f64; 2]; 2]) {
    let half_ln_2pi = 0.5 * (2.0 * std::f64::consts::PI).ln();
    let (mut ll, mut ga, mut gb) = (0.0, 0.0, 0.0);
    let (mut haa, mut hab, mut hbb) = (0.0, 0.0, 0.0);
    for o in obs {
        let y = o.wait_s.max(1e-3).ln();
        let z = a * y - b;
        if o.abandoned {
            ll += a.ln() - y - half_ln_2pi - 0.5 * z * z;
            ga += 1.0 / a - z * y;
            gb += z;
            haa -= 1.0 / (a * a) + y * y;
            hab += y;
            hbb -= 1.0;
        } else {
            let (ln_s, h) = log_sf_and_mills(z);
            let dh = h * (h - z);
            ll += ln_s;
            ga -= h * y;
            gb += h;
            haa -= dh * y * y;
            hab += dh * y;
            hbb -= dh;
        }
    }
    (ll, [ga, gb], [[haa, hab], [hab, hbb]])
}

/// Censored log-normal by Newton's method on the concave parametrisation;
/// the start is the abandoned waits' own log mean and sd.
pub fn fit_lognormal(obs: &[Obs]) -> Result<ParametricFit, TooFew> {
    let ev: Vec<f64> = obs
        .iter()
        .filter(|o| o.abandoned)
        .map(|o| o.wait_s.max(1e-3).ln())
        .collect();
    if ev.len() < 2 {
        return Err(TooFew(format!(
            "{} abandons: a spread needs at least 2",
            ev.len()
        )));
    }
    let m = ev.iter().sum::<f64>() / ev.len() as f64;
    let sd = (ev.iter().map(|y| (y - m).powi(2)).sum::<f64>() / (ev.len() as f64 - 1.0))
        .sqrt()
        .max(0.05);
    let (mut a, mut b) = (1.0 / sd, m / sd);
    let (mut ll, mut g, mut h) = lognormal_terms(obs, a, b);
    let mut converged = false;
    for _ in 0..200 {
        let Some(inv) = inverse2([[-h[0][0], -h[0][1]], [-h[1][0], -h[1][1]]]) else {
            break;
        };
        let step = [
            inv[0][0] * g[0] + inv[0][1] * g[1],
            inv[1][0] * g[0] + inv[1][1] * g[1],
        ];
        let mut t = 1.0;
        let mut moved = false;
        while t > 1e-10 {
            let (na, nb) = (a + t * step[0], b + t * step[1]);
            if na > 0.0 {
                let (nll, ng, nh) = lognormal_terms(obs, na, nb);
                if nll >= ll - 1e-12 * ll.abs() {
                    let gain = nll - ll;
                    (a, b, ll, g, h) = (na, nb, nll, ng, nh);
                    moved = true;
                    if gain.abs() < 1e-10 * (1.0 + ll.abs()) {
                        converged = true;
                    }
                    break;
                }
            }
            t *= 0.5;
        }
        if !moved || converged {
            converged = converged || (g[0].abs() + g[1].abs()) < 1e-6 * (1.0 + ll.abs());
            break;
        }
    }
    if !converged {
        return Err(TooFew("the log-normal fit did not converge".into()));
    }
    let cov = inverse2([[-h[0][0], -h[0][1]], [-h[1][0], -h[1][1]]])
        .ok_or_else(|| TooFew("the log-normal fit's information is singular".into()))?;
    let (sigma, mu) = (1.0 / a, b / a);
    if sigma > MAX_SIGMA {
        return Err(TooFew(format!(
            "the log-normal's sigma {sigma:.1} is beyond the {MAX_SIGMA} a scenario can hold"
        )));
    }
    // ln σ = −ln a: se = se(a)/a. μ = b/a: gradient (−b/a², 1/a).
    let se_ln_sigma = cov[0][0].sqrt() / a;
    let gm = [-b / (a * a), 1.0 / a];
    let var_mu = delta_var(gm, &cov);
    // mean = exp(μ + σ²/2): gradient of its log in (a, b) is
    // (∂μ/∂a + σ ∂σ/∂a, ∂μ/∂b) = (−b/a² − 1/a³, 1/a).
    let gmean = [-b / (a * a) - 1.0 / (a * a * a), 1.0 / a];
    let var_ln_mean = delta_var(gmean, &cov);
    Ok(ParametricFit {
        family: Family::LogNormal,
        log_likelihood: ll,
        aic: 4.0 - 2.0 * ll,
        delta_aic: 0.0,
        params: vec![
            (
                "median_s".into(),
                Estimate::log_scale(mu.exp(), var_mu.sqrt()),
            ),
            ("sigma".into(), Estimate::log_scale(sigma, se_ln_sigma)),
            (
                "mean_s".into(),
                Estimate::log_scale((mu + 0.5 * sigma * sigma).exp(), var_ln_mean.sqrt()),
            ),
        ],
    })
}

/// The three families fitted, best AIC first, with each one's distance
/// from the best; families that could not be fitted are named with why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    pub fits: Vec<ParametricFit>,
    pub not_fitted: Vec<(Family, String)>,
}

impl Comparison {
    pub fn best(&self) -> Option<&ParametricFit> {
        self.fits.first()
    }
}

pub fn compare(obs: &[Obs]) -> Comparison {
    let mut fits = Vec::new();
    let mut not_fitted = Vec::new();
    for (family, r) in [
        (Family::Exponential, fit_exponential(obs)),
        (Family::Weibull, fit_weibull(obs)),
        (Family::LogNormal, fit_lognormal(obs)),
    ] {
        match r {
            Ok(f) => fits.push(f),
            Err(TooFew(why)) => not_fitted.push((family, why)),
        }
    }
    // Ties (to the last bit) go to the simpler family, listed first.
    fits.sort_by(|a, b| a.aic.total_cmp(&b.aic).then(a.family.cmp(&b.family)));
    if let Some(best) = fits.first().map(|f| f.aic) {
        for f in &mut fits {
            f.delta_aic = f.aic - best;
        }
    }
    Comparison { fits, not_fitted }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t: f64) -> Obs {
        Obs {
            wait_s: t,
            abandoned: true,
        }
    }
    fn cens(t: f64) -> Obs {
        Obs {
            wait_s: t,
            abandoned: false,
        }
    }

    /// A deterministic sample from a distribution by its quantile function
    /// at evenly spread probabilities, censored at `c_s` by a second grid.
    fn sample(n: usize, quantile: impl Fn(f64) -> f64, censor_at: impl Fn(f64) -> f64) -> Vec<Obs> {
        (0..n)
            .map(|i| {
                let u = (i as f64 + 0.5) / n as f64;
                // A second, scrambled probability for the censoring time.
                let v = ((i as f64 * 0.618_033_988_75) % 1.0 + 0.5 / n as f64).min(0.999);
                let t = quantile(u);
                let c = censor_at(v);
                Obs {
                    wait_s: t.min(c),
                    abandoned: t <= c,
                }
            })
            .collect()
    }

    #[test]
    fn kaplan_meier_matches_a_hand_computed_example() {
        // Times 1, 2+, 3, 3, 4+, 5: at 1, 6 at risk, S = 5/6; at 3, 4 at
        // risk, 2 events: S = 5/6 * 2/4 = 5/12; at 5, 1 at risk: S = 0.
        let km = kaplan_meier(&[ev(1.0), cens(2.0), ev(3.0), ev(3.0), cens(4.0), ev(5.0)]);
        let s: Vec<(f64, usize, f64)> = km.iter().map(|k| (k.t_s, k.at_risk, k.survival)).collect();
        assert_eq!(s.len(), 3);
        assert_eq!((s[0].0, s[0].1), (1.0, 6));
        assert!((s[0].2 - 5.0 / 6.0).abs() < 1e-12);
        assert_eq!((s[1].0, s[1].1), (3.0, 4));
        assert!((s[1].2 - 5.0 / 12.0).abs() < 1e-12);
        assert_eq!((s[2].0, s[2].1, s[2].2), (5.0, 1, 0.0));
        // Greenwood at t = 1: S² d/(n(n−d)) = (25/36)(1/30); the band holds S.
        assert!(km[0].lo < km[0].survival && km[0].survival < km[0].hi);
    }

    #[test]
    fn censored_exponential_is_events_over_exposure() {
        let obs = [ev(10.0), cens(30.0), ev(20.0), cens(40.0)];
        let f = fit_exponential(&obs).unwrap();
        let mean = f.param("mean_s").unwrap();
        // 2 events in 100 s: rate 0.02, mean 50 s.
        assert!((mean.value - 50.0).abs() < 1e-12);
        // ln L = d ln r − r T = 2 ln 0.02 − 2.
        assert!((f.log_likelihood - (2.0 * 0.02f64.ln() - 2.0)).abs() < 1e-12);
        // Interval: 50 · exp(± 1.96 / √2).
        assert!((mean.hi - 50.0 * (Z95 / 2f64.sqrt()).exp()).abs() < 1e-9);
    }

    #[test]
    fn weibull_with_exponential_data_finds_shape_one_and_the_same_likelihood() {
        let obs = sample(
            4000,
            |u| -120.0 * (1.0 - u).ln(),
            |v| -300.0 * (1.0 - v).ln(),
        );
        let w = fit_weibull(&obs).unwrap();
        let e = fit_exponential(&obs).unwrap();
        let k = w.param("shape").unwrap();
        assert!(k.covers(1.0), "shape {k:?}");
        assert!((k.value - 1.0).abs() < 0.05);
        // The Weibull's likelihood at shape 1 equals the exponential's;
        // at its own maximum it can only be higher, by little.
        let (ll1, _, _) = weibull_terms(&obs, 1.0, e.param("mean_s").unwrap().value.ln());
        assert!((ll1 - e.log_likelihood).abs() < 1e-6 * e.log_likelihood.abs());
        assert!(w.log_likelihood >= ll1 - 1e-9);
        assert!(w.log_likelihood - ll1 < 3.0);
    }

    #[test]
    fn weibull_recovers_shape_and_scale_under_censoring() {
        let (k, lam) = (1.8, 90.0);
        let obs = sample(
            5000,
            |u| lam * (-(1.0 - u).ln()).powf(1.0 / k),
            |v| 150.0 * v + 20.0,
        );
        let f = fit_weibull(&obs).unwrap();
        let (sk, sl) = (f.param("shape").unwrap(), f.param("scale_s").unwrap());
        assert!((sk.value - k).abs() < 0.05, "{sk:?}");
        assert!((sl.value - lam).abs() < 2.0, "{sl:?}");
        // The score is zero at the maximum.
        let (_, g, _) = weibull_terms(&obs, sk.value, sl.value.ln());
        assert!(g[0].abs() < 1e-3 && g[1].abs() < 1e-3, "{g:?}");
        let cmp = compare(&obs);
        assert_eq!(cmp.best().unwrap().family, Family::Weibull);
    }

    #[test]
    fn lognormal_recovers_median_and_sigma_under_censoring() {
        let n = Normal::standard();
        let (med, sig) = (60.0, 0.7);
        let obs = sample(
            5000,
            |u| med * (sig * n.inverse_cdf(u)).exp(),
            |v| 200.0 * v + 10.0,
        );
        let f = fit_lognormal(&obs).unwrap();
        let (m, s) = (f.param("median_s").unwrap(), f.param("sigma").unwrap());
        assert!((m.value - med).abs() < 1.5, "{m:?}");
        assert!((s.value - sig).abs() < 0.03, "{s:?}");
        assert!(m.lo < m.value && m.value < m.hi);
        assert_eq!(compare(&obs).best().unwrap().family, Family::LogNormal);
    }

    #[test]
    fn lognormal_without_censoring_is_the_log_mean_and_the_ml_sd() {
        let obs: Vec<Obs> = [10.0, 20.0, 40.0, 80.0].iter().map(|&t| ev(t)).collect();
        let f = fit_lognormal(&obs).unwrap();
        // ln t = ln 10 + {0,1,2,3} ln 2: mean ln 10 + 1.5 ln 2, ML sd √1.25 ln 2.
        let median = (10f64.ln() + 1.5 * 2f64.ln()).exp();
        assert!((f.param("median_s").unwrap().value - median).abs() < 1e-6);
        assert!((f.param("sigma").unwrap().value - 1.25f64.sqrt() * 2f64.ln()).abs() < 1e-6);
    }

    #[test]
    fn everyone_giving_up_at_once_offers_no_weibull_a_scenario_cannot_hold() {
        // Fixed patience of 60 s: the shape runs past what a scenario holds.
        let obs: Vec<Obs> = (0..200)
            .map(|i| {
                if i % 4 == 0 {
                    cens(10.0 + i as f64 * 0.1)
                } else {
                    ev(60.0)
                }
            })
            .collect();
        let c = compare(&obs);
        assert!(
            c.not_fitted
                .iter()
                .any(|(f, why)| *f == Family::Weibull && why.contains("1000")),
            "{c:?}"
        );
        assert!(c
            .fits
            .iter()
            .all(|f| f.param("shape").is_none_or(|k| k.value <= MAX_SHAPE)));
    }

    #[test]
    fn too_few_abandons_say_so() {
        assert!(fit_exponential(&[cens(3.0)]).is_err());
        assert!(fit_weibull(&[ev(3.0), cens(4.0)]).is_err());
        let c = compare(&[ev(3.0), cens(4.0)]);
        assert_eq!(c.fits.len(), 1);
        assert_eq!(c.not_fitted.len(), 2);
    }
}
