package doccheck

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the module's root, from this package's directory.
const root = "../.."

// TestDocLinks: every relative link of the module's Markdown files (the
// README, docs/, the terraform modules' and examples' READMEs) points at
// a file or directory that exists and, with a #fragment, at a heading
// that the target page has (as GitHub names its anchors); a Markdown
// page's own #fragments too. Every mention of a docs/ page in the code,
// the help texts and the manifests (docs/shards.md#cost) names a page and
// heading that exist, and every page under docs/ is reachable from the
// README by its links.
func TestDocLinks(t *testing.T) {
	pages := markdownFiles(t)
	anchors := map[string][]string{} // page (slash path from root) → its anchors
	anchorsOf := func(page string) []string {
		if a, ok := anchors[page]; ok {
			return a
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			return nil
		}
		anchors[page] = headingAnchors(string(b))
		return anchors[page]
	}
	linked := map[string][]string{} // page → the pages it links to
	for _, page := range pages {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links(string(b)) {
			target, fragment, _ := strings.Cut(l.target, "#")
			if target == "" {
				target = page
			} else {
				target = path.Join(path.Dir(page), target)
			}
			if strings.HasPrefix(target, "../") || target == ".." {
				t.Errorf("%s:%d: link %q leaves the repository", page, l.line, l.target)
				continue
			}
			info, err := os.Stat(filepath.Join(root, filepath.FromSlash(target)))
			if err != nil {
				t.Errorf("%s:%d: link %q: no file %s", page, l.line, l.target, target)
				continue
			}
			if info.IsDir() {
				target = path.Join(target, "README.md") // what GitHub shows for a directory
			}
			if strings.HasSuffix(target, ".md") {
				linked[page] = append(linked[page], target)
			}
			if fragment == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				t.Errorf("%s:%d: link %q: a #fragment on %s, which is not a Markdown page", page, l.line, l.target, target)
			} else if !slices.Contains(anchorsOf(target), fragment) {
				t.Errorf("%s:%d: link %q: %s has no heading #%s (it has %s)", page, l.line, l.target, target, fragment, strings.Join(anchorsOf(target), ", "))
			}
		}
	}

	// Mentions of docs pages outside Markdown: comments, help texts,
	// manifests.
	mention := regexp.MustCompile(`docs/[a-z0-9/_-]+\.md(#[a-z0-9_-]+)?`)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".go", ".yaml", ".tf", ".md", ".sh", "":
		default:
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range mention.FindAllString(string(b), -1) {
			page, fragment, _ := strings.Cut(m, "#")
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(page))); err != nil {
				t.Errorf("%s mentions %s: no such page", p, m)
			} else if fragment != "" && !slices.Contains(anchorsOf(page), fragment) {
				t.Errorf("%s mentions %s: %s has no heading #%s", p, m, page, fragment)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// Every page of docs/ is reachable from the README.
	seen := map[string]bool{"README.md": true}
	queue := []string{"README.md"}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, q := range linked[p] {
			if !seen[q] {
				seen[q] = true
				queue = append(queue, q)
			}
		}
	}
	for _, page := range pages {
		if strings.HasPrefix(page, "docs/") && !seen[page] {
			t.Errorf("%s cannot be reached from README.md by its links", page)
		}
	}
}

// TestHeadingAnchors: anchors are named as GitHub names them.
func TestHeadingAnchors(t *testing.T) {
	got := headingAnchors("# Title\n\n## Sharded runs: `leasehold run --shards`\n\n```sh\n# not a heading\n```\n\n### A simulated fleet: 10,000 shards ÷ TTL\n\n## Title\n")
	want := []string{"title", "sharded-runs-leasehold-run---shards", "a-simulated-fleet-10000-shards--ttl", "title-1"}
	if !slices.Equal(got, want) {
		t.Errorf("headingAnchors = %q, want %q", got, want)
	}
	if got := links("See [a](b.md#c), `[not](x.md)`, [d](https://e.example) and\n```\n[not](y.md)\n```\n[f](g/)\n"); len(got) != 2 || got[0].target != "b.md#c" || got[1].target != "g/" || got[1].line != 5 {
		t.Errorf("links = %+v, want b.md#c on line 1 and g/ on line 5", got)
	}
}

// markdownFiles returns the module's Markdown files, as slash paths from
// its root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var pages []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			pages = append(pages, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pages, "README.md") {
		t.Fatalf("no README.md under %s", root)
	}
	return pages
}

// skipDir reports whether a walk of the module skips the directory name:
// hidden ones (.git, the test stack's .stack), test data and installed
// packages.
func skipDir(name string) bool {
	return name != ".." && name != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules")
}

type link struct {
	target string
	line   int
}

var (
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// links returns the relative link targets of a Markdown text, outside
// code blocks and code spans.
func links(text string) []link {
	var out []link
	fence := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			if !scheme.MatchString(m[1]) {
				out = append(out, link{m[1], i + 1})
			}
		}
	}
	return out
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown text: lower case, letters, digits, '-' and '_' kept, spaces made
// '-', everything else dropped; a repeated anchor gets -1, -2, ….
func headingAnchors(text string) []string {
	var out []string
	count := map[string]int{}
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		heading := strings.TrimSpace(strings.TrimLeft(line, "#"))
		heading = inlineLink.ReplaceAllString(heading, "]") // [text](url) → [text]
		var b strings.Builder
		for _, r := range strings.ToLower(heading) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		if n := count[a]; n > 0 {
			count[a] = n + 1
			a += "-" + strconv.Itoa(n)
		} else {
			count[a] = 1
		}
		out = append(out, a)
	}
	return out
}
