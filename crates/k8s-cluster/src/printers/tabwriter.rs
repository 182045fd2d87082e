//! Go's `text/tabwriter` (flags 0, pad character ' '), which kubectl lays its tables
//! (`minwidth 6, padding 3`) and `describe` output (`minwidth 0, padding 2`) out with.
//!
//! Text is cut into lines and each line into tab-terminated cells; the text after a line's last
//! tab is not a cell of any column and is written as is. A column block is a run of consecutive
//! lines that all have a cell in that column; its width is the widest cell plus `padding`, at least
//! `minwidth`, and the block's lines are then formatted column by column inside it (upstream
//! `Writer.format`). A line with fewer cells ends the block: this is what makes `describe`'s
//! `Name:` block and its `Containers:` sections align separately.

/// Formats `text` (lines ending in `\n`) as Go's `tabwriter.NewWriter(out, minwidth, 8, padding,
/// ' ', 0)` does when it is flushed once at the end. Widths count characters (runes), as upstream.
pub fn format(text: &str, minwidth: usize, padding: usize) -> String {
    let lines: Vec<Vec<&str>> = text
        .split_inclusive('\n')
        .map(|l| l.strip_suffix('\n').unwrap_or(l).split('\t').collect())
        .collect();
    let mut out = String::with_capacity(text.len() * 2);
    let mut widths = Vec::new();
    format_block(
        &lines,
        0,
        lines.len(),
        &mut widths,
        minwidth,
        padding,
        &mut out,
    );
    if !text.ends_with('\n') && out.ends_with('\n') {
        out.pop();
    }
    out
}

/// Upstream `Writer.format(pos, line0, line1)`: the column `widths.len()` over lines `line0..line1`.
fn format_block(
    lines: &[Vec<&str>],
    mut line0: usize,
    line1: usize,
    widths: &mut Vec<usize>,
    minwidth: usize,
    padding: usize,
    out: &mut String,
) {
    let column = widths.len();
    let mut this = line0;
    while this < line1 {
        if column + 1 >= lines[this].len() {
            this += 1;
            continue;
        }
        // A cell in this column: the lines before it are done, a block starts here.
        write_lines(lines, line0, this, widths, out);
        line0 = this;
        let mut width = minwidth;
        while this < line1 && column + 1 < lines[this].len() {
            width = width.max(lines[this][column].chars().count() + padding);
            this += 1;
        }
        widths.push(width);
        format_block(lines, line0, this, widths, minwidth, padding, out);
        widths.pop();
        line0 = this;
    }
    write_lines(lines, line0, line1, widths, out);
}

fn write_lines(lines: &[Vec<&str>], from: usize, to: usize, widths: &[usize], out: &mut String) {
    for line in &lines[from..to] {
        for (j, cell) in line.iter().enumerate() {
            out.push_str(cell);
            if j + 1 < line.len() {
                let w = widths.get(j).copied().unwrap_or(0);
                let n = cell.chars().count();
                out.extend(std::iter::repeat_n(' ', w.saturating_sub(n)));
            }
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::format;

    /// Blocks end at a line with fewer cells: `a:`/`bbbb:` align, `c:` after `x` aligns alone.
    #[test]
    fn blocks_align_separately() {
        let text = "a:\t1\nbbbb:\t2\nx\nc:\t3\n";
        assert_eq!(format(text, 0, 2), "a:     1\nbbbb:  2\nx\nc:  3\n");
    }

    /// A nested column only spans the lines that have it.
    #[test]
    fn nested_columns() {
        let text = "  Type\tStatus\n  Ready \tTrue \n";
        assert_eq!(format(text, 0, 2), "  Type    Status\n  Ready   True \n");
        assert_eq!(
            format("A\tB\tC\nlonger\tb\tc\n", 6, 3),
            "A        B     C\nlonger   b     c\n"
        );
    }
}
