// Package junit writes JUnit XML, the test-report format CI systems (GitLab, Jenkins,
// GitHub test reporters, Buildkite) show natively: planrun's expects, references and
// gate verdicts become test cases, and a failure's message holds the figure and the
// threshold it crossed.
package junit

import (
	"encoding/xml"
	"io"
)

// Case is one check. Failure is empty when it held; Skipped says why it was not judged
// (a baseline with insufficient data, say).
type Case struct {
	Class   string // the suite-level group: "expect", "reference", "gate", "cell"
	Name    string
	Failure string // one line: the figure, its value and the threshold
	Detail  string // more text for the failure's body
	Skipped string
}

// Suite is a named list of cases: one command's checks.
type Suite struct {
	Name  string
	Cases []Case
}

type xmlSuites struct {
	XMLName  xml.Name   `xml:"testsuites"`
	Name     string     `xml:"name,attr"`
	Tests    int        `xml:"tests,attr"`
	Failures int        `xml:"failures,attr"`
	Skipped  int        `xml:"skipped,attr"`
	Suites   []xmlSuite `xml:"testsuite"`
}

type xmlSuite struct {
	Name     string    `xml:"name,attr"`
	Tests    int       `xml:"tests,attr"`
	Failures int       `xml:"failures,attr"`
	Skipped  int       `xml:"skipped,attr"`
	Cases    []xmlCase `xml:"testcase"`
}

type xmlCase struct {
	Class   string      `xml:"classname,attr"`
	Name    string      `xml:"name,attr"`
	Failure *xmlFailure `xml:"failure,omitempty"`
	Skipped *xmlSkipped `xml:"skipped,omitempty"`
}

type xmlFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

type xmlSkipped struct {
	Message string `xml:"message,attr"`
}

// Write writes the suites as one <testsuites> document.
func Write(w io.Writer, name string, suites ...Suite) error {
	doc := xmlSuites{Name: name}
	for _, s := range suites {
		xs := xmlSuite{Name: s.Name, Tests: len(s.Cases)}
		for _, c := range s.Cases {
			xc := xmlCase{Class: c.Class, Name: c.Name}
			switch {
			case c.Failure != "":
				xc.Failure = &xmlFailure{Message: c.Failure, Type: c.Class, Body: c.Detail}
				xs.Failures++
			case c.Skipped != "":
				xc.Skipped = &xmlSkipped{Message: c.Skipped}
				xs.Skipped++
			}
			xs.Cases = append(xs.Cases, xc)
		}
		doc.Tests, doc.Failures, doc.Skipped = doc.Tests+xs.Tests, doc.Failures+xs.Failures, doc.Skipped+xs.Skipped
		doc.Suites = append(doc.Suites, xs)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
