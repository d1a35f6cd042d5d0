/**
 * Local ESLint rule: `x as never` and `x as unknown as T` (also `<never>x`, `<T><unknown>x`) switch the type
 * checker off, so each one needs a comment saying why, on the same line or the line before.
 * Directive comments (eslint-*, prettier-ignore, @ts-*) do not count as a reason; the rule cannot judge whether
 * the comment really is about the cast.
 */

const DIRECTIVE = /^\s*(eslint[-\s]|eslint$|prettier-ignore|@ts-|global\s|globals\s)/;

/** @param {any} node */
const isAssertion = (node) => node && (node.type === 'TSAsExpression' || node.type === 'TSTypeAssertion');

/** @type {import('eslint').Rule.RuleModule} */
export default {
  meta: {
    type: 'suggestion',
    docs: { description: 'Require a comment saying why on `as never` and `as unknown as` casts' },
    schema: [],
    messages: {
      never: '`as never` needs a comment on this line or the line before saying why the cast is safe.',
      unknownAs: '`as unknown as` needs a comment on this line or the line before saying why the cast is safe.',
    },
  },
  create(context) {
    const sourceCode = context.sourceCode;
    /** Lines with a real (non-directive, non-empty) comment; `own`: comments alone on their line(s). */
    let comments = null;
    const commentLines = () => {
      if (!comments) {
        comments = { any: new Set(), own: new Set() };
        for (const c of sourceCode.getAllComments()) {
          if (!c.value.trim() || DIRECTIVE.test(c.value)) continue;
          const before = sourceCode.getTokenBefore(c, { includeComments: false });
          const trailing = before && before.loc.end.line === c.loc.start.line;
          for (let l = c.loc.start.line; l <= c.loc.end.line; l++) {
            comments.any.add(l);
            if (!trailing) comments.own.add(l);
          }
        }
      }
      return comments;
    };
    /**
     * Explained: a comment on the cast's first line or on the line of its type, or a comment alone on the line
     * before either (a trailing comment of the previous statement is about that statement, not this cast).
     */
    const explained = (node) => {
      const { any, own } = commentLines();
      const lines = [node.loc.start.line, node.typeAnnotation.loc.start.line];
      return lines.some((l) => any.has(l) || own.has(l - 1));
    };
    const check = (node) => {
      const type = node.typeAnnotation.type;
      let messageId = null;
      if (type === 'TSNeverKeyword') messageId = 'never';
      else if (isAssertion(node.expression) && node.expression.typeAnnotation.type === 'TSUnknownKeyword') {
        messageId = 'unknownAs';
      }
      if (messageId && !explained(node)) context.report({ node, messageId });
    };
    return { TSAsExpression: check, TSTypeAssertion: check };
  },
};
