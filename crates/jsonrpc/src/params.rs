//! The members of a request's params that Warden's stages read (`name`,
//! `arguments`, `_meta`, `task`), found while the message is parsed, so that
//! no stage scans the params again.

use std::ops::Range;
use std::sync::Arc;

use crate::frame::Span;
use crate::meta::MetaSpans;

/// Where those members are in a frame's text.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ParamSpans {
    /// `name`, `arguments`, `_meta`, `task`; none when absent.
    spans: [Span; 4],
    /// Whether the params have other members too.
    others: bool,
}

/// The members of a request's params that the stages read, as JSON text
/// (a `null` value included), from [`Frame::param_members`](crate::Frame::param_members).
/// Each was named at most once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParamMembers<'a> {
    /// `name`: the tool's or prompt's.
    pub name: Option<&'a str>,
    /// `arguments`.
    pub arguments: Option<&'a str>,
    /// `_meta`.
    pub meta: Option<&'a str>,
    /// `task`: the request is task-augmented.
    pub task: Option<&'a str>,
    /// Whether the params have members besides these four: without, a stage
    /// that looks for another (a retry's `requestState`) need not search.
    pub others: bool,
}

impl ParamSpans {
    /// The members, in `text` (the frame's).
    pub(crate) fn members<'a>(&self, text: &'a str) -> ParamMembers<'a> {
        let at = |span: Span| span.range().map(|range| &text[range]);
        ParamMembers {
            name: at(self.spans[0]),
            arguments: at(self.spans[1]),
            meta: at(self.spans[2]),
            task: at(self.spans[3]),
            others: self.others,
        }
    }

    /// Whether the params have members besides the four.
    pub(crate) fn others(&self) -> bool {
        self.others
    }

    /// `_meta`'s text, in `text` (the frame's).
    pub(crate) fn meta<'a>(&self, text: &'a str) -> Option<&'a str> {
        text.get(self.meta_range()?)
    }

    /// Where `_meta` is in the frame's text.
    pub(crate) fn meta_range(&self) -> Option<std::ops::Range<usize>> {
        self.spans[2].range()
    }

    /// The spans moved by `by` bytes where they start at or after `from`
    /// (a frame's id was replaced before them).
    pub(crate) fn shifted(mut self, from: usize, by: isize) -> ParamSpans {
        let moved = |at: usize| (at as isize + by) as usize;
        for span in &mut self.spans {
            if let Some(range) = span.range()
                && range.start >= from
            {
                *span = Span::of(Some(moved(range.start)..moved(range.end)));
            }
        }
        self
    }
}

/// Notes the members of a params object as the scan passes them.
#[derive(Default)]
pub(crate) struct ParamsReader {
    spans: ParamSpans,
    meta: Option<MetaSpans>,
    /// A key with an escape (it may spell one of the four), or one of the
    /// four named twice: the stages read the params themselves.
    unreadable: bool,
}

impl ParamsReader {
    /// One member, whose value starts at `at` in `text` (the message):
    /// where the value ends. An object `_meta` is read member by member on
    /// the way.
    #[inline(always)]
    pub(crate) fn read(&mut self, text: &str, key: &[u8], at: usize) -> Option<usize> {
        let end = if key == b"_meta" && text.as_bytes().get(at) == Some(&b'{') {
            let (end, meta) = crate::meta::read(text, at)?;
            self.meta = meta;
            end
        } else {
            crate::scan::value_end(text.as_bytes(), at)?
        };
        self.note(key, at..end);
        Some(end)
    }

    /// One member: its key's bytes as written, where its value is in the
    /// message's text.
    fn note(&mut self, key: &[u8], value: Range<usize>) {
        let slot = match key {
            b"name" => 0,
            b"arguments" => 1,
            b"_meta" => 2,
            b"task" => 3,
            _ => {
                self.unreadable |= key.contains(&b'\\');
                self.spans.others = true;
                return;
            }
        };
        self.unreadable |= std::mem::replace(&mut self.spans.spans[slot], Span::of(Some(value))).range().is_some();
    }

    /// The spans and `_meta`'s, unless the params must be read otherwise.
    /// `_meta`'s are behind a pointer, shared: most requests have none, a
    /// frame is moved from stage to stage, and a renamed frame (the lane's
    /// copy of a request) keeps them.
    pub(crate) fn finish(self) -> Option<(ParamSpans, Option<Arc<MetaSpans>>)> {
        (!self.unreadable).then(|| (self.spans, self.meta.map(Arc::new)))
    }
}
