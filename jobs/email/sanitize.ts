import type sanitizeHtml from 'sanitize-html';
import { lazyRequire } from '../../lib/lazy-require.js';

const sanitizer = lazyRequire<typeof sanitizeHtml>('sanitize-html');

/**
 * The HTML of a received e-mail made safe to show in the admin panel (issue 9 item 4): sanitize-html
 * with an allow-list of formatting tags. Dropped: script, style, iframe, object, form and every
 * other tag not listed (their text kept, except script/style/textarea/noscript whose content
 * goes too), every `on*` and unlisted attribute, `javascript:` and every other scheme but http,
 * https, mailto and tel on links; images only from `cid:` (parts of the same message: rewritten to
 * the attachment's download URL when read, see rewriteCidLinks), never remote (no tracking pixel).
 * Links get rel="noopener noreferrer nofollow" and target _blank.
 */
let options: sanitizeHtml.IOptions | undefined;
/** The options, built on first use (sanitize-html is loaded then). */
function sanitizeOptions(): sanitizeHtml.IOptions {
  if (options) return options;
  const sanitizeHtml = sanitizer();
  const o: sanitizeHtml.IOptions = {
    allowedTags: [
      ...sanitizeHtml.defaults.allowedTags.filter((t) => t !== 'style'),
      'img',
      'font',
      'center',
      'span',
      'u',
      's',
    ],
    disallowedTagsMode: 'discard',
    allowedAttributes: {
      a: ['href', 'name', 'title'],
      img: ['src', 'alt', 'title', 'width', 'height'],
      font: ['color', 'size', 'face'],
      td: ['colspan', 'rowspan', 'align', 'valign', 'width'],
      th: ['colspan', 'rowspan', 'align', 'valign', 'width'],
      table: ['width', 'border', 'cellpadding', 'cellspacing', 'align'],
      '*': ['align', 'dir', 'lang'],
    },
    allowedSchemes: ['http', 'https', 'mailto', 'tel'],
    allowedSchemesByTag: { img: ['cid'] },
    allowedSchemesAppliedToAttributes: ['href', 'src', 'cite'],
    allowProtocolRelative: false,
    nonTextTags: ['script', 'style', 'textarea', 'noscript', 'title', 'head'],
    transformTags: {
      a: sanitizeHtml.simpleTransform('a', { rel: 'noopener noreferrer nofollow', target: '_blank' }),
    },
    exclusiveFilter: (frame) => frame.tag === 'img' && !/^cid:/i.test(frame.attribs.src ?? ''),
  };
  // rel and target are set by the transform; allow them on the way out
  (o.allowedAttributes as Record<string, string[]>).a.push('rel', 'target');
  return (options = o);
}

/**
 * Sanitises the HTML body of an e-mail (see the rules above).
 * @param html the HTML as the message carried it (decoded)
 * @returns safe HTML, `cid:` image sources kept for rewriteCidLinks
 */
export function sanitizeEmailHtml(html: string): string {
  return sanitizer()(html, sanitizeOptions());
}

/**
 * Rewrites `cid:<content-id>` image sources of sanitised HTML to URLs (the message's attachment
 * downloads); a cid without an attachment loses its src.
 * @param html sanitised HTML
 * @param urlFor content-id (without `<>`) -> URL, or null
 */
export function rewriteCidLinks(html: string, urlFor: (cid: string) => string | null): string {
  return html.replace(/src="cid:([^"]*)"/gi, (_m, cid: string) => {
    const url = urlFor(decodeURIComponent(cid).replace(/^<|>$/g, ''));
    return url ? `src="${url}"` : 'src=""';
  });
}
