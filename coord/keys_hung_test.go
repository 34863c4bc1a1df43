package coord

import "testing"

func TestHungKeyRoundTrip(t *testing.T) {
	key := HungKey("j1", "trainer-1")
	if w, ok := ParseHungKey("j1", key); !ok || w != "trainer-1" {
		t.Errorf("ParseHungKey(%q) = %q, %v", key, w, ok)
	}
	if p, ok := ParseJobKey(key); !ok || p.Kind != JobKeyHung || p.Name != "trainer-1" || p.Job != "j1" {
		t.Errorf("ParseJobKey(%q) = %+v, %v; want kind JobKeyHung", key, p, ok)
	}
	for _, bad := range []string{HungPrefix("j1"), HungKey("j2", "trainer-1"), HungKey("j1", "a/b"), WorkerKey("j1", "trainer-1")} {
		if w, ok := ParseHungKey("j1", bad); ok {
			t.Errorf("ParseHungKey(%q) = %q, want not a hung key", bad, w)
		}
	}
}
