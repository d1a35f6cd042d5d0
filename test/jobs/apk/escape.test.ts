import { expect } from 'chai';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { decodeAndroidString, escapeAndroidString, escapeProperty } from '../../../jobs/apk/escape.js';
import { writeTemplateValues, type BuildConfig } from '../../../jobs/apk/values.js';
import { TEMPLATE_DIR } from '../../../jobs/apk/options.js';

/**
 * Issue 12 item 4: values reach the template through escapers only. The written files are read
 * back by the real readers: java.util.Properties.load and a W3C DOM parser (Java, as Gradle and
 * aapt2 read them), then Android's backslash rules, and JSON.parse; the value comes back unchanged.
 */

const READER = `
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.*;

public class Reader {
  public static void main(String[] args) throws Exception {
    for (int k = 0; k + 1 < args.length; k += 2) read(args[k], args[k + 1]);
  }

  static void read(String props, String xmlFile) throws Exception {
    Properties p = new Properties();
    try (InputStream in = new FileInputStream(props)) { p.load(in); }
    Document d = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(new File(xmlFile));
    NodeList strings = d.getElementsByTagName("string");
    String xml = null;
    for (int i = 0; i < strings.getLength(); i++) {
      Element e = (Element) strings.item(i);
      if (e.getAttribute("name").equals("app_name")) xml = e.getTextContent();
    }
    Base64.Encoder b = Base64.getEncoder();
    System.out.println(b.encodeToString(p.getProperty("app_name").getBytes(StandardCharsets.UTF_8)));
    System.out.println(b.encodeToString(p.getProperty("version_name").getBytes(StandardCharsets.UTF_8)));
    System.out.println(b.encodeToString(xml.getBytes(StandardCharsets.UTF_8)));
  }
}
`;

const SAMPLES = [
  `A'b"c<d>&\\@x \${y}`,
  '@string/evil',
  '?attr/evil',
  '  two  spaces ',
  '100% = #1 : !ok',
  'Café ✓ 日本',
  'tab\there',
];

describe('template values through the escapers (Properties, Android XML, JSON)', function () {
  this.timeout(120_000);
  let dir: string;

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'apk-escape-'));
    await fs.writeFile(path.join(dir, 'Reader.java'), READER);
  });
  after(() => fs.rm(dir, { recursive: true, force: true }));

  it(`app_name ${SAMPLES[0]} (and other hostile names) come back unchanged from every written file`, async () => {
    const files: string[] = [];
    const projects: string[] = [];
    for (const [i, name] of SAMPLES.entries()) {
      const project = path.join(dir, `p${i}`);
      await fs.cp(TEMPLATE_DIR, project, { recursive: true });
      const config: BuildConfig = {
        app_type: 'portal',
        app_name: name,
        package_id: 'id.test.app',
        version_name: `1.0 ${name}`,
        version_code: 3,
        base_url: 'https://x.test',
        api_url: null,
        environment: 'production',
        theme_color: '#112233',
        orientation: 'landscape',
        signing_mode: 'debug',
      };
      await writeTemplateValues(project, config);
      projects.push(project);
      files.push(
        path.join(project, 'apk.properties'),
        path.join(project, 'app', 'src', 'main', 'res', 'values', 'config.xml'),
      );
    }
    // one JVM reads every project's files
    const r = await execa('java', [path.join(dir, 'Reader.java'), ...files], { cwd: dir });
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => Buffer.from(l, 'base64').toString('utf8'));
    expect(lines).to.have.length(SAMPLES.length * 3);
    for (const [i, name] of SAMPLES.entries()) {
      const [propName, propVersion, xmlBody] = lines.slice(i * 3, i * 3 + 3);
      const project = projects[i];
      const props = files[i * 2];
      expect(propName, `Properties app_name of ${name}`).to.equal(name);
      expect(propVersion, `Properties version_name of ${name}`).to.equal(`1.0 ${name}`);
      expect(decodeAndroidString(xmlBody), `Android string of ${name}`).to.equal(name);
      // what aapt2 would see first: no unescaped reference marker
      expect(/^[@?]/.test(xmlBody), xmlBody).to.equal(false);
      const json = JSON.parse(await fs.readFile(path.join(project, 'web', 'config.json'), 'utf8'));
      expect(json.app_name).to.equal(name);
      // the properties file is ASCII whatever the name
      expect([...(await fs.readFile(props))].every((b) => b < 0x80)).to.equal(true);
      expect(await fs.readFile(files[i * 2 + 1], 'utf8')).to.include('<color name="theme_color">#112233</color>');
      expect(await fs.readFile(props, 'utf8')).to.include('screen_orientation=landscape');
    }
  });

  it('escapes the way each format needs', () => {
    expect(escapeProperty(' a=b:c#d!e\\f')).to.equal('\\ a\\=b\\:c\\#d\\!e\\\\f');
    expect(escapeProperty('é\n')).to.equal('\\u00E9\\n');
    expect(escapeAndroidString(`A'b"c<d>&\\@x`)).to.equal(`A\\'b\\"c&lt;d&gt;&amp;\\\\@x`);
    expect(escapeAndroidString('@x ?y')).to.equal('\\@x ?y');
    expect(escapeAndroidString(' a  b ')).to.equal('\\u0020a \\u0020b\\u0020');
  });
});
