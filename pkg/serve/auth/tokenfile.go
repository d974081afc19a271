package auth

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/apictl/apictl/pkg/serve/request"
)

// TokenFile authenticates static bearer tokens from a CSV file in kube's --token-auth-file format:
// token,user,uid,"group1,group2". The file is read once, at start-up, as kube does.
type TokenFile struct {
	tokens map[string]*request.User
}

var _ Authenticator = (*TokenFile)(nil)

// LoadTokenFile reads and checks a token file; errors name the line.
func LoadTokenFile(path string) (*TokenFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading token file: %w", err)
	}
	defer f.Close()
	t, err := ParseTokens(f)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	return t, nil
}

// ParseTokens reads token records from r.
func ParseTokens(r io.Reader) (*TokenFile, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	t := &TokenFile{tokens: map[string]*request.User{}}
	for {
		record, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return nil, fmt.Errorf("not valid CSV: %w", err)
		}
		line, _ := cr.FieldPos(0)
		if len(record) < 3 || record[0] == "" || record[1] == "" {
			return nil, fmt.Errorf("line %d: want token,user,uid[,\"group1,group2\"], got %d field(s)", line, len(record))
		}
		if _, dup := t.tokens[record[0]]; dup {
			return nil, fmt.Errorf("line %d: the token of user %q is also another line's token", line, record[1])
		}
		u := &request.User{Name: record[1], UID: record[2]}
		if len(record) > 3 && record[3] != "" {
			for _, g := range strings.Split(record[3], ",") {
				if g = strings.TrimSpace(g); g != "" {
					u.Groups = append(u.Groups, g)
				}
			}
		}
		t.tokens[record[0]] = u
	}
}

// Len is the number of tokens.
func (t *TokenFile) Len() int { return len(t.tokens) }

// AuthenticateRequest looks the bearer token up. An unknown token is an error (401), not anonymous.
func (t *TokenFile) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	token, ok := bearerToken(r)
	if !ok {
		return nil, false, nil
	}
	u, found := t.tokens[token]
	if !found {
		return nil, false, errors.New("invalid bearer token")
	}
	cp := *u
	cp.Groups = append([]string(nil), u.Groups...)
	return &cp, true, nil
}
