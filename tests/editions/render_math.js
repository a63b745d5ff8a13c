// Every math span of the given markdown cells, found as JupyterLab finds it and rendered
// by the renderers students' front ends use:
//
// * KaTeX (Colab, VS Code), throwOnError and every strict warning recorded;
// * MathJax 3 (JupyterLab), every TeX package but noerrors and noundefined, so that an
//   error or an undefined macro throws instead of showing in red;
// * VS Code's notebook renderer (markdown-it with @vscode/markdown-it-katex): which spans
//   it takes for math at all (its delimiter rules differ: a closing $ followed by a letter
//   does not close, so `$x$th` shows as raw TeX). A span it takes for math but changes
//   (in a table row, `\|` becomes `|`) is listed under "altered", not as a failure.
//
// Usage: node tests/editions/render_math.js cells.json result.json, where cells.json is
// [{"where": "...", "source": "..."}]; result.json gets {spans, inline, display, failures:
// [{where, renderer, tex, error}], altered: [{where, tex}]}. Run by tests/editions/test_math_rendering.py, offline:
// the packages come from node_modules (package.json, `npm ci`).
"use strict";

const fs = require("fs");
const katex = require("katex");
const MarkdownIt = require("markdown-it");

// --- JupyterLab's removeMath (@jupyterlab/rendermime, latex.ts), ported ------------------

const MATHSPLIT =
  /(\$\$?|\\(?:begin|end)\{[a-z]*\*?\}|\\[{}$]|[{}]|(?:\n\s*)+|@@\d+@@|\\\\(?:\(|\)|\[|\]))/i;

function findMath(source) {
  let text = source;
  // Code spans and fences are not math: their dollars are hidden first, as JupyterLab does.
  if (text.includes("`") || text.includes("~~~")) {
    text = text
      .replace(/~/g, "~T")
      .replace(/^(?<fence>`{3,}|(~T){3,})[^`\n]*\n([\s\S]*?)^\k<fence>`*$/gm, (m) =>
        m.replace(/\$/g, "~D"))
      .replace(/(^|[^\\])(`+)([^\n]*?[^`\n])\2(?!`)/gm, (m) => m.replace(/\$/g, "~D"));
  }
  const blocks = text.replace(/\r\n?/g, "\n").split(MATHSPLIT);
  const spans = [];
  let start = null;
  let end = null;
  let last = null;
  let braces = 0;
  const take = (i, j) => {
    spans.push(blocks.slice(i, j + 1).join("").replace(/~([TD])/g,
      (m, c) => (c === "T" ? "~" : "$")));
  };
  for (let i = 1; i < blocks.length; i += 2) {
    const block = blocks[i];
    if (block.charAt(0) === "@") continue;
    if (start !== null) {
      if (block === end) {
        if (braces) {
          last = i;
        } else {
          take(start, i);
          start = end = last = null;
        }
      } else if (/\n.*\n/.test(block)) {
        if (last !== null) take(start, last);
        start = end = last = null;
        braces = 0;
      } else if (block === "{") {
        braces++;
      } else if (block === "}" && braces) {
        braces--;
      }
    } else if (block === "$" || block === "$$") {
      start = i;
      end = block;
      braces = 0;
    } else if (block === "\\\\(" || block === "\\\\[") {
      start = i;
      end = block.slice(-1) === "(" ? "\\\\)" : "\\\\]";
      braces = 0;
    } else if (block.substr(1, 5) === "begin") {
      start = i;
      end = "\\end" + block.substr(6);
      braces = 0;
    }
  }
  if (start !== null && last !== null) take(start, last);
  return spans.map((span) => {
    if (span.startsWith("$$")) return { tex: span.slice(2, -2).trim(), display: true };
    if (span.startsWith("$")) return { tex: span.slice(1, -1), display: false };
    if (span.startsWith("\\\\[")) return { tex: span.slice(3, -3).trim(), display: true };
    if (span.startsWith("\\\\(")) return { tex: span.slice(3, -3), display: false };
    return { tex: span, display: true }; // a bare \begin{...}...\end{...}
  });
}

// --- VS Code: which spans its markdown-it plugin takes for math ------------------------

const normal = (tex) => tex.replace(/\s+/g, " ").trim();

function vscodeMath(source) {
  const seen = [];
  const pluginKatex = require(require.resolve("katex", {
    paths: [require.resolve("@vscode/markdown-it-katex")],
  }));
  const render = pluginKatex.renderToString;
  pluginKatex.renderToString = (tex, options) => {
    seen.push(normal(tex));
    return render.call(pluginKatex, tex, { ...options, throwOnError: false });
  };
  try {
    const md = new MarkdownIt({ html: true });
    md.use(require("@vscode/markdown-it-katex").default, {
      enableBareBlocks: true,
      enableFencedBlocks: true,
    });
    md.render(source);
  } finally {
    pluginKatex.renderToString = render;
  }
  return seen;
}

// --- the check ---------------------------------------------------------------------------

async function main() {
  const [input, output] = process.argv.slice(2);
  const cells = JSON.parse(fs.readFileSync(input, "utf8"));
  const MathJax = await require("mathjax").init({
    loader: { load: ["adaptors/liteDOM", "input/tex-full", "output/svg"] },
    tex: {
      packages: { "[-]": ["noerrors", "noundefined"] },
      formatError: (jax, err) => {
        throw err;
      },
    },
    startup: { typeset: false },
  });
  const result = { spans: 0, inline: 0, display: 0, failures: [], altered: [] };
  // The two editions share most cells, and a chapter repeats its formulas: each distinct
  // formula is rendered once and each distinct cell parsed once (a formula's outcome
  // depends on its TeX and display mode only, a cell's spans on its source only).
  const rendered = new Map();
  const errorsOf = (tex, display) => {
    const key = (display ? "D" : "I") + tex;
    if (!rendered.has(key)) {
      const errors = [];
      try {
        katex.renderToString(tex, {
          displayMode: display,
          throwOnError: true,
          strict: (code, message) => {
            errors.push(["katex-strict", `${code}: ${message}`]);
            return "ignore";
          },
        });
      } catch (err) {
        errors.push(["katex", err.message]);
      }
      try {
        MathJax.tex2svg(tex, { display });
      } catch (err) {
        errors.push(["mathjax", err.message]);
      }
      rendered.set(key, errors);
    }
    return rendered.get(key);
  };
  const parsed = new Map();
  for (const cell of cells) {
    if (!parsed.has(cell.source)) {
      parsed.set(cell.source, [findMath(cell.source), vscodeMath(cell.source)]);
    }
    const [spans, seen] = parsed.get(cell.source);
    const vscode = [...seen];
    for (const { tex, display } of spans) {
      result.spans++;
      result[display ? "display" : "inline"]++;
      const fail = (renderer, error) =>
        result.failures.push({ where: cell.where, renderer, tex, error: String(error) });
      for (const [renderer, error] of errorsOf(tex, display)) fail(renderer, error);
      const at = vscode.indexOf(normal(tex));
      const changed = vscode.indexOf(normal(tex.replace(/\\\|/g, "|")));
      if (at >= 0) {
        vscode.splice(at, 1);
      } else if (changed >= 0) {
        vscode.splice(changed, 1);
        result.altered.push({ where: cell.where, tex });
      } else {
        fail("vscode", "not recognised as math: shown as raw TeX");
      }
    }
  }
  fs.writeFileSync(output, JSON.stringify(result));
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});
