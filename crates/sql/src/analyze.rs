//! Parsing a SQL string and walking the top of its syntax tree.

use std::panic::{AssertUnwindSafe, catch_unwind};

use sqlparser::ast::{Expr, LimitClause, PipeOperator, Query, SetExpr, Statement, UnaryOperator, Value};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

use crate::dialect::Dialect;
use crate::error::SqlError;
use crate::facts::{SqlFacts, StatementFacts, StatementKind};

/// Longest input [`analyze`] accepts, in bytes (1 MiB); longer input is [`SqlError::TooLarge`].
///
/// Parsing needs memory and time in proportion: a 1 MiB bulk `INSERT` takes about 200 MB
/// and half a second while it is parsed.
pub const MAX_INPUT_BYTES: usize = 1024 * 1024;

/// The parser's recursion limit: how deeply parentheses, subqueries and expressions may nest
/// before [`analyze`] gives [`SqlError::TooDeep`]. Typical queries need 4 to 15.
pub const MAX_RECURSION_DEPTH: usize = 32;

/// Longest operator chain [`analyze`] accepts before giving [`SqlError::TooComplex`].
///
/// The parser builds `a OR b OR c ...` and `... UNION ... UNION ...` without recursing,
/// but into a tree as deep as the chain, which is freed recursively; this bounds that
/// depth. Counted per nesting path: operators and keywords since the last comma at the
/// same parenthesis level (set operations are never reset by a comma), summed over
/// the enclosing levels. Identifiers, numbers and strings do not count.
pub const MAX_CHAIN: usize = 5_000;

/// Most statements [`analyze`] accepts in one input before giving [`SqlError::TooManyStatements`].
///
/// Each parsed statement takes several KiB of memory however short it is, so a megabyte of
/// `SELECT 1;SELECT 1;...` would otherwise need more than a gigabyte and seconds of parsing.
/// Counted before parsing as `;`-separated parts that hold a token, so a `;` inside a
/// procedure body counts too.
pub const MAX_STATEMENTS: usize = 1_000;

/// Stack for the parser thread in unoptimized builds (see [`analyze`]).
const DEBUG_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Parses `sql` in `dialect` and reports facts about each top-level statement.
///
/// Strict: anything not understood is an error, never empty facts. That includes empty
/// input, only comments or `;`, input over [`MAX_INPUT_BYTES`], nesting deeper than
/// [`MAX_RECURSION_DEPTH`], operator chains longer than [`MAX_CHAIN`], more than
/// [`MAX_STATEMENTS`] statements, and syntax the dialect does not accept. Comments are
/// ignored, so `SELECT 1 -- x\n; DROP TABLE t` has two statements.
///
/// Cost: one tokenization, one linear pass over the tokens, one parse and a walk of the
/// top of each statement. A typical short query takes a few microseconds, about the same
/// as sqlparser's own `parse_sql`.
///
/// Stack: in optimized builds the parse runs on the caller's thread and needs at most
/// about 1 MiB of stack for any input. Unoptimized builds (`debug_assertions`) have stack
/// frames several times larger, so there the parse runs on a short-lived thread with a
/// 64 MiB stack; the result is the same. Any input, however hostile, gives `Ok` or `Err`:
/// a panic inside the parser is caught and reported as [`SqlError::Internal`].
///
/// # Errors
///
/// A [`SqlError`] saying why the input was not understood; see its variants.
pub fn analyze(sql: &str, dialect: Dialect) -> Result<SqlFacts, SqlError> {
    if sql.len() > MAX_INPUT_BYTES {
        return Err(SqlError::TooLarge { len: sql.len(), max: MAX_INPUT_BYTES });
    }
    if cfg!(debug_assertions) { analyze_on_big_stack(sql, dialect) } else { analyze_here(sql, dialect) }
}

/// Runs [`analyze_inner`] on the current thread, turning a panic into an error.
fn analyze_here(sql: &str, dialect: Dialect) -> Result<SqlFacts, SqlError> {
    catch_unwind(AssertUnwindSafe(|| analyze_inner(sql, dialect)))
        .unwrap_or_else(|_| Err(SqlError::Internal("the SQL parser panicked".to_owned())))
}

/// Runs [`analyze_inner`] on a new thread with a large stack and waits for it.
fn analyze_on_big_stack(sql: &str, dialect: Dialect) -> Result<SqlFacts, SqlError> {
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("warden-sql".to_owned())
            .stack_size(DEBUG_STACK_BYTES)
            .spawn_scoped(scope, || analyze_inner(sql, dialect))
            .map_err(|e| SqlError::Internal(format!("could not start the SQL parser thread: {e}")))?;
        worker.join().unwrap_or_else(|_| Err(SqlError::Internal("the SQL parser panicked".to_owned())))
    })
}

fn analyze_inner(sql: &str, dialect: Dialect) -> Result<SqlFacts, SqlError> {
    let parser_dialect = dialect.parser_dialect();
    let tokens =
        Tokenizer::new(parser_dialect, sql).tokenize_with_location().map_err(|e| SqlError::Tokenize(e.to_string()))?;
    check_tokens(&tokens)?;
    let statements = Parser::new(parser_dialect)
        .with_recursion_limit(MAX_RECURSION_DEPTH)
        .with_tokens_with_locations(tokens)
        .parse_statements()
        .map_err(|e| match e {
            ParserError::RecursionLimitExceeded => SqlError::TooDeep { limit: MAX_RECURSION_DEPTH },
            ParserError::TokenizerError(message) => SqlError::Tokenize(message),
            ParserError::ParserError(message) => SqlError::Parse(message),
        })?;
    if statements.is_empty() {
        return Err(SqlError::Empty);
    }
    Ok(SqlFacts { statements: statements.iter().map(statement_facts).collect() })
}

/// Operator counts of one parenthesis level, for [`check_tokens`].
#[derive(Default)]
struct Level {
    /// Operators and keywords since the last comma at this level.
    chain: usize,
    /// Set operations (`UNION`, ...) at this level: a comma does not end their chain.
    set_ops: usize,
}

/// Rejects input without any token but whitespace and comments, brackets nested deeper
/// than the parser could accept, operator chains longer than [`MAX_CHAIN`] and more than
/// [`MAX_STATEMENTS`] statements.
fn check_tokens(tokens: &[TokenWithSpan]) -> Result<(), SqlError> {
    let mut statements = 0usize;
    // The current statement has a token other than `;`.
    let mut in_statement = false;
    let mut levels = vec![Level::default()];
    // Sum of `chain + set_ops` over `levels`.
    let mut path = 0usize;
    for token in tokens {
        match &token.token {
            Token::Whitespace(_) | Token::EOF => continue,
            Token::SemiColon => {
                if in_statement {
                    statements += 1;
                    in_statement = false;
                }
                levels.clear();
                levels.push(Level::default());
                path = 0;
            }
            Token::Comma => {
                if let Some(level) = levels.last_mut() {
                    path = path.saturating_sub(level.chain);
                    level.chain = 0;
                }
            }
            Token::LParen | Token::LBracket | Token::LBrace => {
                if let Some(level) = levels.last_mut() {
                    level.chain += 1;
                    path += 1;
                }
                // Each bracket costs the parser at least one level of its recursion limit.
                if levels.len() > MAX_RECURSION_DEPTH {
                    return Err(SqlError::TooDeep { limit: MAX_RECURSION_DEPTH });
                }
                levels.push(Level::default());
            }
            Token::RParen | Token::RBracket | Token::RBrace => {
                if levels.len() > 1
                    && let Some(level) = levels.pop()
                {
                    path = path.saturating_sub(level.chain + level.set_ops);
                }
            }
            Token::Word(word)
                if word.quote_style.is_none()
                    && matches!(
                        word.keyword,
                        Keyword::UNION | Keyword::EXCEPT | Keyword::INTERSECT | Keyword::MINUS
                    ) =>
            {
                if let Some(level) = levels.last_mut() {
                    level.set_ops += 1;
                    path += 1;
                }
            }
            Token::Word(word) if word.quote_style.is_some() || word.keyword == Keyword::NoKeyword => {}
            Token::Number(..) | Token::SingleQuotedString(_) | Token::DoubleQuotedString(_) | Token::Placeholder(_) => {
            }
            _ => {
                if let Some(level) = levels.last_mut() {
                    level.chain += 1;
                    path += 1;
                }
            }
        }
        if token.token != Token::SemiColon {
            in_statement = true;
        }
        if path > MAX_CHAIN {
            return Err(SqlError::TooComplex { limit: MAX_CHAIN });
        }
        if statements + usize::from(in_statement) > MAX_STATEMENTS {
            return Err(SqlError::TooManyStatements { limit: MAX_STATEMENTS });
        }
    }
    if statements + usize::from(in_statement) == 0 { Err(SqlError::Empty) } else { Ok(()) }
}

fn statement_facts(statement: &Statement) -> StatementFacts {
    match statement {
        Statement::Query(query) => query_facts(query),
        other => dml_or_ddl_facts(other),
    }
}

/// Facts for a statement that is not a query (no recursion into nested statements).
fn dml_or_ddl_facts(statement: &Statement) -> StatementFacts {
    let facts = |kind| StatementFacts { kind, unbounded_select: false, has_where: false };
    match statement {
        Statement::Insert { .. } => facts(StatementKind::Insert),
        Statement::Update(update) => {
            StatementFacts { has_where: update.selection.is_some(), ..facts(StatementKind::Update) }
        }
        Statement::Delete(delete) => {
            StatementFacts { has_where: delete.selection.is_some(), ..facts(StatementKind::Delete) }
        }
        Statement::Merge { .. } => facts(StatementKind::Merge),
        Statement::Truncate { .. } => facts(StatementKind::Truncate),
        Statement::Grant { .. } => facts(StatementKind::Grant),
        Statement::Revoke { .. } => facts(StatementKind::Revoke),
        Statement::Drop { .. }
        | Statement::DropFunction { .. }
        | Statement::DropDomain { .. }
        | Statement::DropProcedure { .. }
        | Statement::DropSecret { .. }
        | Statement::DropPolicy { .. }
        | Statement::DropConnector { .. }
        | Statement::DropExtension { .. }
        | Statement::DropOperator { .. }
        | Statement::DropOperatorFamily { .. }
        | Statement::DropOperatorClass { .. }
        | Statement::DropTrigger { .. } => facts(StatementKind::Drop),
        Statement::AlterTable { .. }
        | Statement::AlterSchema { .. }
        | Statement::AlterIndex { .. }
        | Statement::AlterView { .. }
        | Statement::AlterFunction { .. }
        | Statement::AlterType { .. }
        | Statement::AlterCollation { .. }
        | Statement::AlterOperator { .. }
        | Statement::AlterOperatorFamily { .. }
        | Statement::AlterOperatorClass { .. }
        | Statement::AlterTextSearch { .. }
        | Statement::AlterRole { .. }
        | Statement::AlterPolicy { .. }
        | Statement::AlterConnector { .. }
        | Statement::AlterSession { .. }
        | Statement::AlterUser { .. }
        | Statement::RenameTable { .. } => facts(StatementKind::Alter),
        Statement::CreateView { .. }
        | Statement::CreateTable { .. }
        | Statement::CreateVirtualTable { .. }
        | Statement::CreateIndex { .. }
        | Statement::CreateRole { .. }
        | Statement::CreateSecret { .. }
        | Statement::CreateServer { .. }
        | Statement::CreatePolicy { .. }
        | Statement::CreateConnector { .. }
        | Statement::CreateOperator { .. }
        | Statement::CreateOperatorFamily { .. }
        | Statement::CreateOperatorClass { .. }
        | Statement::CreateTextSearch { .. }
        | Statement::CreateExtension { .. }
        | Statement::CreateCollation { .. }
        | Statement::CreateSchema { .. }
        | Statement::CreateDatabase { .. }
        | Statement::CreateFunction { .. }
        | Statement::CreateTrigger { .. }
        | Statement::CreateProcedure { .. }
        | Statement::CreateMacro { .. }
        | Statement::CreateStage { .. }
        | Statement::CreateFileFormat { .. }
        | Statement::CreateWarehouse { .. }
        | Statement::CreateSequence { .. }
        | Statement::CreateDomain { .. }
        | Statement::CreateType { .. }
        | Statement::CreateUser { .. } => facts(StatementKind::Create),
        _ => facts(StatementKind::Other),
    }
}

fn query_facts(query: &Query) -> StatementFacts {
    match query.body.as_ref() {
        // `WITH ... INSERT/UPDATE/DELETE/MERGE` (PostgreSQL): the kind of the inner statement.
        SetExpr::Insert(inner) | SetExpr::Update(inner) | SetExpr::Delete(inner) | SetExpr::Merge(inner) => {
            dml_or_ddl_facts(inner)
        }
        _ if selects_into(query) => {
            StatementFacts { kind: StatementKind::Create, unbounded_select: false, has_where: false }
        }
        _ => StatementFacts {
            kind: StatementKind::Select,
            unbounded_select: !is_bounded(query),
            has_where: outer_select_has_where(query),
        },
    }
}

/// The query's first `SELECT` has an `INTO` clause (`SELECT ... INTO new_table FROM ...`).
fn selects_into(query: &Query) -> bool {
    let mut body = query.body.as_ref();
    loop {
        match body {
            SetExpr::Select(select) => return select.into.is_some(),
            SetExpr::SetOperation { left, .. } => body = left,
            SetExpr::Query(inner) => body = &inner.body,
            _ => return false,
        }
    }
}

/// The outermost query caps its row count (see [`StatementFacts::unbounded_select`]).
fn is_bounded(query: &Query) -> bool {
    let mut query = query;
    loop {
        if !query.pipe_operators.is_empty() {
            return matches!(query.pipe_operators.last(), Some(PipeOperator::Limit { expr, .. }) if caps_rows(expr));
        }
        let limited = match &query.limit_clause {
            Some(LimitClause::LimitOffset { limit: Some(limit), limit_by, .. }) => {
                limit_by.is_empty() && caps_rows(limit)
            }
            Some(LimitClause::OffsetCommaLimit { limit, .. }) => caps_rows(limit),
            Some(LimitClause::LimitOffset { limit: None, .. }) | None => false,
        };
        let fetched = query.fetch.as_ref().is_some_and(|fetch| !fetch.percent);
        if limited || fetched {
            return true;
        }
        match query.body.as_ref() {
            SetExpr::Select(select) => {
                return select.top.as_ref().is_some_and(|top| !top.percent && top.quantity.is_some());
            }
            // `(SELECT ... LIMIT 5)`: the parenthesized query is the whole query.
            SetExpr::Query(inner) => query = inner,
            _ => return false,
        }
    }
}

/// A `LIMIT` value caps the row count unless it is `NULL` (PostgreSQL: no limit) or
/// negative (SQLite: no limit). Other values are not evaluated.
fn caps_rows(limit: &Expr) -> bool {
    let mut expr = limit;
    while let Expr::Nested(inner) = expr {
        expr = inner;
    }
    match expr {
        Expr::Value(value) => value.value != Value::Null,
        Expr::UnaryOp { op: UnaryOperator::Minus, .. } => false,
        _ => true,
    }
}

/// The outermost query body is a plain `SELECT` with a `WHERE` clause.
fn outer_select_has_where(query: &Query) -> bool {
    let mut body = query.body.as_ref();
    loop {
        match body {
            SetExpr::Select(select) => return select.selection.is_some(),
            SetExpr::Query(inner) => body = &inner.body,
            _ => return false,
        }
    }
}
