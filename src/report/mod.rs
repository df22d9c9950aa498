//! Files people read: tables, plots, the HTML report, comparisons.
//! (The tables, plots and HTML arrive with the outputs issue.)
