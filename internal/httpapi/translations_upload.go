package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/textcheck"
)

// maxFormParts bounds the parts of one multipart body (files and fields).
const maxFormParts = 200

// formFile is one file of a multipart body.
type formFile struct {
	field, name string
	content     []byte
}

// form is a multipart/form-data body, read from the request's body (under
// the body limit already).
type form struct {
	values map[string][]string
	files  []formFile
}

func (f *form) value(name string) (string, bool) {
	vs := f.values[name]
	if len(vs) == 0 {
		return "", false
	}
	return vs[0], true
}

// readForm parses a multipart/form-data body; anything else is a 400.
func readForm(r *http.Request) (*form, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, errorf(http.StatusBadRequest, "The body must be multipart/form-data")
	}
	body, _ := r.Context().Value(bodyKey{}).([]byte)
	if !bytes.Contains(body, []byte("--"+params["boundary"]+"--")) {
		return nil, errorf(http.StatusBadRequest, "The body is not valid multipart/form-data: it has no closing boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	f := &form{values: map[string][]string{}}
	for n := 0; ; n++ {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "The body is not valid multipart/form-data")
		}
		if n >= maxFormParts {
			return nil, errorf(http.StatusBadRequest, "The body has more than "+strconv.Itoa(maxFormParts)+" parts")
		}
		content, err := io.ReadAll(p)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "The body is not valid multipart/form-data")
		}
		name := p.FormName()
		if p.FileName() != "" {
			f.files = append(f.files, formFile{field: name, name: p.FileName(), content: content})
			continue
		}
		if err := textcheck.Text(string(content)); err != nil {
			return nil, invalid(strings.ToValidUTF8(name, "\uFFFD"), err.Error(), nil)
		}
		f.values[name] = append(f.values[name], string(content))
	}
	return f, nil
}

// localeFile reads the locale of a file named <locale>.json.
func localeFile(name string) (string, bool) {
	base, ok := strings.CutSuffix(name, ".json")
	if !ok || !localeRE.MatchString(base) {
		return "", false
	}
	return base, true
}

// shownName is a file name as an error may quote it.
func shownName(name string) string {
	name = strings.ToValidUTF8(strings.ReplaceAll(name, "\x00", ""), "\uFFFD")
	if len(name) > 200 {
		name = strings.ToValidUTF8(name[:200], "") + "…"
	}
	return name
}

// jsonObjectFile reads a file's content as a JSON object that both stores
// hold alike, compacted; why it cannot, otherwise.
func jsonObjectFile(content []byte) (store.JSON, string) {
	if len(bytes.TrimSpace(content)) == 0 {
		return nil, "the file is empty"
	}
	problems, err := textcheck.JSON(content, maxJSONDepth)
	if err != nil {
		return nil, "the file is not valid JSON"
	}
	if len(problems) > 0 {
		return nil, "the file holds " + problems[0].Err.Error()
	}
	obj, ok := compactObject(content)
	if !ok {
		return nil, "the file is not a JSON object"
	}
	if len(obj) > maxTranslationBytes {
		return nil, "the file is larger than " + strconv.Itoa(maxTranslationBytes) + " bytes of JSON"
	}
	return obj, ""
}

type uploadJSON struct {
	TotalFiles        int      `json:"totalFiles"`
	SuccessfulUploads int      `json:"successfulUploads"`
	FailedUploads     int      `json:"failedUploads"`
	Errors            []string `json:"errors"`
}

// translationUpload serves POST /v2/translations/upload: files named
// <locale>.json (in "files" or "files[]"), each replacing its locale of
// the resource; a file that is not a JSON object fails alone.
func (s *Server) translationUpload(w http.ResponseWriter, r *http.Request) error {
	f, err := readForm(r)
	if err != nil {
		return err
	}
	errs := fieldErrors{}
	id, ok := f.value("resourceId")
	switch {
	case !ok || id == "":
		errs.add("resourceId", "is required", nil)
	case len(id) > maxIndexedBytes:
		errs.add("resourceId", "must be at most 1024 bytes of UTF-8", nil)
	}
	typ, ok := f.value("resourceType")
	if !ok || typ == "" {
		errs.add("resourceType", "is required", nil)
	} else if typ != store.TranslationWorkflow && typ != store.TranslationLayout {
		errs.add("resourceType", "must be one of [workflow layout]", typ)
	}
	if err := errs.err(); err != nil {
		return err
	}
	var files []formFile
	bad := fieldErrors{}
	for _, file := range f.files {
		if file.field != "files" && file.field != "files[]" {
			continue
		}
		if _, ok := localeFile(file.name); !ok {
			bad.add(shownName(file.name), "must be named <locale>.json, the locale as language_REGION (en_US.json)", shownName(file.name))
			continue
		}
		files = append(files, file)
	}
	if len(bad) > 0 {
		return &apiError{status: http.StatusBadRequest, fields: bad,
			message: "Some files have invalid names or formats: name each file <locale>.json (en_US.json, fr_FR.json)"}
	}
	if len(files) == 0 {
		return errorf(http.StatusBadRequest, "No valid translation files were found")
	}
	scope := callerFrom(r.Context()).Scope
	res, err := s.findTranslationResource(r.Context(), scope, typ, id)
	if err != nil {
		return err
	}
	out := uploadJSON{TotalFiles: len(files), Errors: []string{}}
	for _, file := range files {
		locale, _ := localeFile(file.name)
		content, why := jsonObjectFile(file.content)
		if why != "" {
			out.FailedUploads++
			out.Errors = append(out.Errors, "Failed to process file '"+shownName(file.name)+"': "+why)
			continue
		}
		if _, err := s.store.TranslationUpsert(r.Context(), &store.TranslationUpsertParams{TranslationKey: store.TranslationKey{
			Scope: scope, ResourceType: typ, ResourceID: res.id, Locale: locale}, Content: content, Now: s.now()}); err != nil {
			return err
		}
		out.SuccessfulUploads++
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// translationMasterUpload serves POST /v2/translations/master-json/upload:
// one file named <locale>.json holding a master JSON for that locale.
func (s *Server) translationMasterUpload(w http.ResponseWriter, r *http.Request) error {
	f, err := readForm(r)
	if err != nil {
		return err
	}
	if len(f.files) != 1 || f.files[0].field != "file" {
		return errorf(http.StatusBadRequest, "Send exactly one file, in the field \"file\", named <locale>.json")
	}
	file := f.files[0]
	locale, ok := localeFile(file.name)
	if !ok {
		return errorf(http.StatusBadRequest, "The file must be named <locale>.json, the locale as language_REGION (en_US.json)")
	}
	content, why := jsonObjectFile(file.content)
	if why != "" {
		return errorf(http.StatusBadRequest, "Failed to process file '"+shownName(file.name)+"': "+why)
	}
	var master map[string]json.RawMessage
	if err := json.Unmarshal(content, &master); err != nil {
		return errorf(http.StatusBadRequest, "The file is not a JSON object")
	}
	return s.importMaster(w, r, locale, master)
}
