package nodemailerfake

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"strings"

	"github.com/herald-notify/herald/internal/provider/providertest"
)

var wordDecoder = &mime.WordDecoder{}

// readBody decodes a message body or part into d's HTML and Text:
// multipart/alternative or mixed recursively, text parts in UTF-8 (or
// ASCII) with any transfer encoding.
func readBody(d *providertest.Delivery, contentType, cte string, r io.Reader, inPart bool) error {
	if contentType == "" {
		contentType = "text/plain; charset=us-ascii"
	}
	typ, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return err
	}
	if strings.HasPrefix(typ, "multipart/") {
		if params["boundary"] == "" {
			return errors.New("multipart without a boundary")
		}
		mr := multipart.NewReader(r, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := readBody(d, p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p, true); err != nil {
				return err
			}
		}
	}
	if typ != "text/plain" && typ != "text/html" {
		return nil // attachments and the like
	}
	if cs := strings.ToLower(params["charset"]); cs != "" && cs != "utf-8" && cs != "us-ascii" {
		return errors.New("charset " + cs + " is not UTF-8")
	}
	content, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if !inPart {
		// The line break that ends the DATA belongs to the terminator.
		content = bytes.TrimSuffix(content, []byte("\r\n"))
	}
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "quoted-printable":
		content, err = io.ReadAll(quotedprintable.NewReader(bytes.NewReader(content)))
	case "base64":
		content, err = io.ReadAll(base64.NewDecoder(base64.StdEncoding, bytes.NewReader(bytes.ReplaceAll(
			bytes.ReplaceAll(content, []byte("\r"), nil), []byte("\n"), nil))))
	case "", "7bit", "8bit", "binary":
	default:
		return errors.New("unknown transfer encoding " + cte)
	}
	if err != nil {
		return err
	}
	if typ == "text/html" {
		d.HTML = string(content)
	} else {
		d.Text = string(content)
	}
	return nil
}
