package junit

import (
	"bytes"
	"encoding/xml"
	"testing"
)

func TestWrite(t *testing.T) {
	var b bytes.Buffer
	err := Write(&b, "planrun", Suite{Name: "apply", Cases: []Case{
		{Class: "expect", Name: "fast: m/x c=1"},
		{Class: "gate", Name: "m/x c=1 ttft_p50_s", Failure: "ttft_p50_s regressed +50% <&>", Detail: "from run a to run b"},
		{Class: "gate", Name: "m/y c=1 ttft_p50_s", Skipped: "insufficient data"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Body    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	f := doc.Suites[0].Cases[1].Failure
	if doc.Tests != 3 || doc.Failures != 1 || doc.Skipped != 1 || f == nil || f.Message != "ttft_p50_s regressed +50% <&>" || f.Body != "from run a to run b" {
		t.Errorf("%+v\n%s", doc, b.String())
	}
}
