//! Reading the metrics back, for the dashboard and `warden status`: the
//! samples of a family, parsed from the text a scrape returns (the only
//! view of every family that the Prometheus client gives).

/// One sample: its labels and value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Its labels, in the order written.
    pub labels: Vec<(String, String)>,
    /// Its value.
    pub value: f64,
}

impl Sample {
    /// The value of label `name`, or `""`.
    pub fn label(&self, name: &str) -> &str {
        self.labels.iter().find(|(key, _)| key == name).map_or("", |(_, value)| value.as_str())
    }
}

/// The samples named `name` in `text` (the OpenMetrics text format).
pub fn samples(text: &str, name: &str) -> Vec<Sample> {
    text.lines()
        .filter_map(|line| line.strip_prefix(name))
        .filter(|rest| rest.starts_with('{') || rest.starts_with(' '))
        .filter_map(parse)
        .collect()
}

/// `{a="x",b="y"} 3` or ` 3`.
fn parse(rest: &str) -> Option<Sample> {
    let mut labels = Vec::new();
    let mut rest = rest;
    if let Some(mut inner) = rest.strip_prefix('{') {
        loop {
            if let Some(after) = inner.strip_prefix('}') {
                rest = after;
                break;
            }
            let (key, after) = inner.split_once("=\"")?;
            let (value, after) = quoted(after)?;
            labels.push((key.trim_start_matches(',').to_owned(), value));
            inner = after.strip_prefix(',').unwrap_or(after);
        }
    }
    let value = rest.split_whitespace().next()?.parse().ok()?;
    Some(Sample { labels, value })
}

/// A label value up to its closing quote, unescaped, and what follows.
fn quoted(text: &str) -> Option<(String, &str)> {
    let mut value = String::new();
    let mut characters = text.char_indices();
    while let Some((at, character)) = characters.next() {
        match character {
            '"' => return Some((value, &text[at + 1..])),
            '\\' => match characters.next()?.1 {
                'n' => value.push('\n'),
                other => value.push(other),
            },
            other => value.push(other),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_read_back_with_their_labels_unescaped() {
        let text = "# HELP x_total X.\nx_total{rule=\"a\\\"b\",decision=\"deny\"} 3\nx_total 1\nx_totals{} 9\ny 2\n";
        let read = samples(text, "x_total");
        assert_eq!(read.len(), 2, "{read:?}");
        assert_eq!(read[0].label("rule"), "a\"b");
        assert_eq!(read[0].label("decision"), "deny");
        assert_eq!(read[0].value, 3.0);
        assert_eq!((read[1].labels.len(), read[1].value), (0, 1.0));
        assert!(samples("x_total{rule=\"open 1\n", "x_total").is_empty(), "a cut line is skipped");
    }

    #[test]
    fn a_counter_of_the_registry_reads_back() {
        let metrics = crate::Metrics::new();
        metrics.sandbox_refused("db", "network");
        metrics.sandbox_refused("db", "network");
        let read = metrics.samples("warden_sandbox_refusals_total");
        assert_eq!(read.len(), 1, "{read:?}");
        assert_eq!((read[0].label("server"), read[0].label("kind"), read[0].value), ("db", "network", 2.0));
    }
}
