// Prettier: the style the code was written in by hand, so the one-time format changed little.
// Lines up to 140 (issue 29: 222 lines were over 160); comments stay wrapped by hand at ~100.
/** @type {import('prettier').Config} */
export default {
  printWidth: 140,
  singleQuote: true,
  // The rest are Prettier's defaults, named because the tree already follows them: semicolons,
  // trailing commas wherever they are allowed, `(x) =>` arrows, two-space indent.
  semi: true,
  trailingComma: 'all',
  arrowParens: 'always',
  tabWidth: 2,
};
