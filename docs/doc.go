// Package docs holds the user documentation: the pages by topic that the
// README links to. Its test checks that every relative link of README.md
// and docs/ leads to a file and heading that exist, and that the README
// and the index reach every page. It has no code of its own.
package docs
