//! Text tables for the terminal: columns as wide as their widest cell.

/// `rows` under `header`, columns two spaces apart, trailing spaces cut.
pub fn table<const N: usize>(header: [&str; N], rows: &[[String; N]]) -> String {
    let mut widths = header.map(|cell| cell.chars().count());
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: [&str; N]| {
        let padded: Vec<String> = cells.iter().zip(widths).map(|(cell, width)| format!("{cell:<width$}")).collect();
        out.push_str(padded.join("  ").trim_end());
        out.push('\n');
    };
    line(header);
    for row in rows {
        line(row.each_ref().map(String::as_str));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_line_up() {
        let rows = [["a".to_owned(), "long value".to_owned()], ["longer".to_owned(), String::new()]];
        assert_eq!(super::table(["X", "Y"], &rows), "X       Y\na       long value\nlonger\n");
    }
}
