package checkpoint

import (
	"fmt"
	"os"
)

// syncDir makes a rename or create in dir durable; without it a power loss can
// forget the new name even though the file data was fsynced.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("opening directory %s for fsync: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync of directory %s: %w", dir, err)
	}
	return nil
}
