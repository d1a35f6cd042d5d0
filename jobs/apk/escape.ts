/**
 * The escapers through which a tenant's values reach the Android template (issue 12 item 4): nothing
 * is spliced into source code. Three formats:
 * - `apk.properties` (java.util.Properties, read by `app/build.gradle.kts`): {@link propertiesFile};
 * - `res/values/config.xml` (Android string resources): {@link androidStringResource};
 * - JSON (`web/config.json`, turned into `assets/app-config.json` by the web step): JSON.stringify.
 * Each is checked in test/jobs/apk/escape.test.ts against the real reader (Java's Properties.load,
 * an Android resource decoder, JSON.parse) with `A'b"c<d>&\@x ${y}`.
 */

/**
 * Escapes a key or value for a java.util.Properties text file (the `Properties.store` rules):
 * `\` `=` `:` `#` `!` and whitespace escaped, a leading space kept, control characters and
 * everything outside printable ASCII as `\uXXXX` (so the file is ASCII whatever the reader's
 * charset). Properties does no `${...}` interpolation, so `$` stays as it is.
 * @param value any string (one line or several)
 * @param isKey keys escape every space, values only a leading one
 */
export function escapeProperty(value: string, isKey = false): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    const code = value.charCodeAt(i);
    switch (ch) {
      case '\\':
        out += '\\\\';
        continue;
      case ' ':
        out += i === 0 || isKey ? '\\ ' : ' ';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\r':
        out += '\\r';
        continue;
      case '\f':
        out += '\\f';
        continue;
      case '=':
      case ':':
      case '#':
      case '!':
        out += '\\' + ch;
        continue;
    }
    if (code < 0x20 || code > 0x7e) out += '\\u' + code.toString(16).toUpperCase().padStart(4, '0');
    else out += ch;
  }
  return out;
}

/**
 * A whole Properties file: a comment line, then `key=value` lines in the given order.
 * @param values keys and values (strings; numbers and booleans as their text)
 */
export function propertiesFile(values: Record<string, string | number | boolean>): string {
  const lines = ['# Written by the app builder (jobs/apk/escape.ts); every value is Properties-escaped.'];
  for (const [k, v] of Object.entries(values)) lines.push(`${escapeProperty(k, true)}=${escapeProperty(String(v))}`);
  return lines.join('\n') + '\n';
}

/**
 * Escapes text for the body of an Android `<string>` resource: first XML (`&` `<` `>`), then
 * Android's own rules: `\` `"` `'` escaped with a backslash, a leading `@` or `?` escaped (else the
 * value is read as a reference), newline and tab as `\n` `\t`, other control characters and spaces
 * that Android would collapse (leading, trailing, repeated) as `\uXXXX`. Use it with
 * `formatted="false"` so a `%` is never a format specifier.
 * @param value the text to show
 */
export function escapeAndroidString(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    const code = value.charCodeAt(i);
    switch (ch) {
      case '&':
        out += '&amp;';
        continue;
      case '<':
        out += '&lt;';
        continue;
      case '>':
        out += '&gt;';
        continue;
      case '\\':
        out += '\\\\';
        continue;
      case '"':
        out += '\\"';
        continue;
      case "'":
        out += "\\'";
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '@':
      case '?':
        out += i === 0 ? '\\' + ch : ch;
        continue;
      case ' ': {
        const collapsible = i === 0 || i === value.length - 1 || value[i - 1] === ' ';
        out += collapsible ? '\\u0020' : ' ';
        continue;
      }
    }
    if (code < 0x20 || code === 0x7f) out += '\\u' + code.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out;
}

/** Escapes an XML attribute value (double-quoted). */
export function escapeXmlAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * A `res/values/*.xml` resource file of strings and colours.
 * @param strings resource name -> text (names are ours: `[a-z_]+`)
 * @param colors resource name -> `#RRGGBB`
 * @throws Error for a resource name or colour outside those forms (a programming error)
 */
export function androidResourceFile(strings: Record<string, string>, colors: Record<string, string> = {}): string {
  const lines = ['<?xml version="1.0" encoding="utf-8"?>', '<!-- Written by the app builder (jobs/apk/escape.ts). -->'];
  lines.push('<resources>');
  for (const [name, text] of Object.entries(strings)) {
    if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`bad resource name ${name}`);
    lines.push(
      `    <string name="${name}" formatted="false" translatable="false">${escapeAndroidString(text)}</string>`,
    );
  }
  for (const [name, color] of Object.entries(colors)) {
    if (!/^[a-z][a-z0-9_]*$/.test(name) || !/^#[0-9A-Fa-f]{6}$/.test(color)) throw new Error(`bad colour ${name}`);
    lines.push(`    <color name="${name}">${color}</color>`);
  }
  lines.push('</resources>');
  return lines.join('\n') + '\n';
}

/**
 * Decodes the body of an Android `<string>` resource as aapt2 does for the forms
 * {@link escapeAndroidString} writes (XML entities, then backslash escapes). Used by the tests and
 * by the stub toolchain to show what a real build would read.
 */
export function decodeAndroidString(body: string): string {
  const xml = body
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
  return xml.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, e: string) => {
    if (e.length === 5) return String.fromCharCode(parseInt(e.slice(1), 16));
    if (e === 'n') return '\n';
    if (e === 't') return '\t';
    return e;
  });
}
