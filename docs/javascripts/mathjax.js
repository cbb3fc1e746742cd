// MathJax for pymdownx.arithmatex (generic mode): \(...\) inline, \[...\] blocks; textmacros
// lets \text{...} hold \texttt{...} (the constraint names beside the equations).
window.MathJax = {
  loader: {load: ["[tex]/textmacros"]},
  tex: {inlineMath: [["\\(", "\\)"]], displayMath: [["\\[", "\\]"]],
        processEscapes: true, processEnvironments: true,
        packages: {"[+]": ["textmacros"]}},
  options: {ignoreHtmlClass: ".*|", processHtmlClass: "arithmatex"}
};
document$.subscribe(() => {
  MathJax.startup.output.clearCache();
  MathJax.typesetClear();
  MathJax.texReset();
  MathJax.typesetPromise();
});
